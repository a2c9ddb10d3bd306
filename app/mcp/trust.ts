import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readJsonObject, writeJsonAtomic } from "./config-file.js";

/** The file a workspace's project servers come from. */
export function projectMcpFile(workspace: string): string {
  return join(workspace, ".mcp.json");
}

/** One trust decision: the workspace's `.mcp.json` with this content, and the secret-looking variables it may read. */
export interface McpTrust {
  sha256: string;
  allowEnv?: string[];
  /** The user said no when the TUI asked about this content: not trusted, and not asked again until it changes. */
  declined?: boolean;
}

/** The content hash trust is bound to: any change to `.mcp.json` revokes it. */
export function hashFile(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  return hashBytes(readFileSync(file));
}

export function hashBytes(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * The decision for `workspace` if it still holds for this content of its
 * `.mcp.json` (pass the bytes that will be used, so nothing can change between
 * the check and the use).
 */
export function currentTrust(trust: Record<string, McpTrust> | undefined, workspace: string, bytes?: Buffer): McpTrust | undefined {
  const decision = trust?.[workspace];
  if (!decision) return undefined;
  const hash = bytes ? hashBytes(bytes) : hashFile(projectMcpFile(workspace));
  return decision.sha256 === hash && !decision.declined ? decision : undefined;
}

/**
 * Records (or with `decision` undefined, removes) the trust decision for a
 * workspace in the user's config file, keeping every other setting as written.
 * The file is replaced by a rename, so a reader never sees half of it. `key`
 * is `mcpTrust` (`.mcp.json`) or `hooksTrust` (project hooks, `keen trust`).
 */
export function writeTrust(
  configFile: string, workspace: string, decision: { sha256: string; declined?: boolean } | undefined, key: "mcpTrust" | "hooksTrust" = "mcpTrust",
): void {
  const raw = readJsonObject(configFile);
  const all = { ...(raw[key] as Record<string, unknown> | undefined) };
  if (decision) all[workspace] = decision;
  else delete all[workspace];
  if (Object.keys(all).length) raw[key] = all;
  else delete raw[key];
  writeJsonAtomic(configFile, raw, 0o600);
}
