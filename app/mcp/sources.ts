import { existsSync, readFileSync } from "node:fs";
import { expandServer, mcpFileSchema, type McpServerConfig, type McpServerSpec, type McpSource } from "./config.js";
import { currentTrust, projectMcpFile, type McpTrust } from "./trust.js";

/** A `--mcp-config` file that cannot be used: the front end makes it a usage error. */
export class McpConfigError extends Error {}

/** Everything the configured servers of one session depend on. */
export interface McpSourcesInput {
  /** `mcpServers` of the user config (already validated with it). */
  user?: Record<string, McpServerConfig>;
  userFile: string;
  /** `--mcp-config` values: absolute file paths, or JSON text (see isInlineJson). */
  flagFiles?: string[];
  /** Servers a front end's client gave for this session (ACP `session/new`); they win over every file. */
  client?: Record<string, McpServerConfig>;
  workspace: string;
  /** `mcpTrust` of the user config. */
  trust?: Record<string, McpTrust>;
  env: NodeJS.ProcessEnv;
  /** Variables providers read their keys from: never expanded in a project file. */
  providerKeyNames: string[];
  isSecretName: (name: string) => boolean;
}

/** The servers of a session: the ones to start, and project servers waiting for the user's trust. */
export interface McpSources {
  servers: McpServerSpec[];
  /** Project servers not started: `.mcp.json` is not trusted (or changed since). */
  untrusted: McpServerSpec[];
  /** Problems with the project file (unreadable, invalid): reported, never fatal. */
  warnings: string[];
}

/**
 * Collects servers from the user config, the project's `.mcp.json` (only
 * when trusted), `--mcp-config` files and the front end's client; a later
 * source replaces a server of the same name (user < project < flag <
 * client). Throws McpConfigError for a flag file that is missing or invalid.
 */
export function collectMcpServers(input: McpSourcesInput): McpSources {
  const byName = new Map<string, McpServerSpec>();
  const untrusted: McpServerSpec[] = [];
  const warnings: string[] = [];
  const lenient = { env: input.env, forbidden: new Set<string>(), isSecretName: input.isSecretName };
  const add = (name: string, config: McpServerConfig, source: McpSource, file: string, rules = lenient) => {
    const expanded = expandServer(config, rules);
    byName.set(name, "error" in expanded ? { name, source, file, config, error: expanded.error } : { name, source, file, config: expanded.config });
  };
  for (const [name, config] of Object.entries(input.user ?? {})) add(name, config, "user", input.userFile);

  const projectFile = projectMcpFile(input.workspace);
  const bytes = existsSync(projectFile) ? readBytes(projectFile) : undefined;
  if (bytes) {
    const parsed = parseMcpFile(projectFile, bytes);
    if ("error" in parsed) warnings.push(parsed.error);
    else {
      const trust = currentTrust(input.trust, input.workspace, bytes);
      const rules = {
        env: input.env, forbidden: new Set(input.providerKeyNames), secretAllowed: new Set(trust?.allowEnv ?? []), isSecretName: input.isSecretName,
      };
      for (const [name, config] of Object.entries(parsed.servers)) {
        if (trust) add(name, config, "project", projectFile, rules);
        else untrusted.push({ name, source: "project", file: projectFile, config });
      }
    }
  }
  for (const file of input.flagFiles ?? []) {
    const inline = isInlineJson(file);
    if (!inline && !existsSync(file)) throw new McpConfigError(`--mcp-config ${file}: no such file`);
    const parsed = inline ? parseMcpFile(INLINE, Buffer.from(file, "utf8")) : parseMcpFile(file);
    if ("error" in parsed) throw new McpConfigError(`--mcp-config ${parsed.error}`);
    for (const [name, config] of Object.entries(parsed.servers)) add(name, config, "flag", inline ? INLINE : file);
  }
  for (const [name, config] of Object.entries(input.client ?? {})) add(name, config, "client", "(client)");
  return { servers: [...byName.values()], untrusted, warnings };
}

/** How an inline `--mcp-config` is named in messages and in a server's `file`. */
const INLINE = "(inline JSON)";

/** A `--mcp-config` value that is JSON text rather than a file name: it starts with `{` (as Claude Code's does). */
export function isInlineJson(value: string): boolean {
  return value.trimStart().startsWith("{");
}

function readBytes(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** Reads a `{"mcpServers": …}` file (or these bytes of it); an error names the file and the field. */
export function parseMcpFile(file: string, bytes?: Buffer): { servers: Record<string, McpServerConfig> } | { error: string } {
  let raw: unknown;
  try {
    raw = JSON.parse((bytes ?? readFileSync(file)).toString("utf8"));
  } catch (error) {
    return { error: `${file}: not valid JSON (${error instanceof Error ? error.message : String(error)})` };
  }
  const parsed = mcpFileSchema().safeParse(raw);
  if (parsed.success) return { servers: parsed.data.mcpServers };
  const issue = parsed.error.issues[0]!;
  return { error: `${file}: ${issue.path.length ? issue.path.join(".") : "(top level)"}: ${issue.message}` };
}

