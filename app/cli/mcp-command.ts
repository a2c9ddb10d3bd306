import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { referencedVariables, type McpServerConfig } from "../mcp/config.js";
import type { McpServerStatus } from "../mcp/manager.js";
import { parseMcpFile } from "../mcp/sources.js";
import { currentTrust, hashBytes, projectMcpFile, writeTrust } from "../mcp/trust.js";
import { terminalText } from "../headless/terminal-text.js";
import { isSecretEnvName } from "../tools/index.js";
import { findWorkspace } from "../tools/workspace.js";
import { keenPaths, loadConfig } from "./config.js";
import { UsageError } from "./errors.js";
import { mcpSecrets, mcpSources, openMcp } from "./mcp-setup.js";
import { secretsRedactor } from "./secrets.js";

interface ListFlags {
  json?: boolean;
  cwd?: string;
  mcpConfig?: string[];
}

/** A configured server as `keen mcp list` shows it. */
interface ServerRow extends McpServerStatus {
  trust: "trusted" | "untrusted" | "n/a";
  transport: string;
}

/** Connects to every configured server (as a session would) and reports each one. */
async function inspect(flags: ListFlags): Promise<ServerRow[]> {
  const paths = keenPaths();
  const cwd = resolve(flags.cwd ?? process.cwd());
  if (!existsSync(cwd)) throw new UsageError(`--cwd ${cwd} does not exist`);
  const workspace = findWorkspace(cwd);
  const config = loadConfig(paths, workspace);
  const sources = mcpSources(paths, config, workspace, flags.mcpConfig);
  for (const warning of sources.warnings) process.stderr.write(`keen: mcp: ${terminalText(warning)}\n`);
  const mcp = await openMcp(paths, config, { ...sources, warnings: [] }, cwd);
  // Error messages may quote a server's headers or env: hidden as in a session.
  const redactor = secretsRedactor(process.env, config.providers, mcpSecrets(sources.servers));
  try {
    const configs = new Map<string, McpServerConfig>([...sources.untrusted, ...sources.servers].map((s) => [s.name, s.config]));
    return redactor.redactDeep((mcp.handle?.status() ?? []).map((s): ServerRow => ({
      ...s, trust: s.source !== "project" ? "n/a" : s.state === "untrusted" ? "untrusted" : "trusted", transport: transportOf(configs.get(s.name)!),
    })));
  } finally {
    await mcp.handle?.close();
  }
}

function transportOf(config: McpServerConfig): string {
  return "command" in config ? "stdio" : config.type === "sse" ? "sse" : "http";
}

/** `keen mcp list`: one line per server (name, source, transport, trust, status, tool count). */
export async function mcpList(flags: ListFlags): Promise<number> {
  const rows = await inspect(flags);
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(rows.map(({ name, source, transport, trust, state, tools, error }) => ({
      name, source, transport, trust, status: state, tools: tools.length, ...(error ? { error } : {}),
    })), null, 2)}\n`);
    return 0;
  }
  if (!rows.length) {
    process.stdout.write("No MCP servers configured (user config mcpServers, .mcp.json in the workspace, or --mcp-config).\n");
    return 0;
  }
  const table = [["NAME", "SOURCE", "TRANSPORT", "TRUST", "STATUS", "TOOLS"], ...rows.map((r) => [
    r.name, r.source, r.transport, r.trust, r.state === "failed" ? `failed: ${r.error}` : r.state, String(r.tools.length),
  ])];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table) process.stdout.write(`${terminalText(row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ").trimEnd())}\n`);
  if (rows.some((r) => r.trust === "untrusted")) process.stderr.write("keen: this workspace's .mcp.json is not trusted: review it, then run `keen mcp trust`\n");
  return 0;
}

/** `keen mcp get <name>`: the server's status and its tools as the model sees them. */
export async function mcpGet(name: string, flags: ListFlags): Promise<number> {
  const rows = await inspect(flags);
  const row = rows.find((r) => r.name === name);
  if (!row) throw new UsageError(`no MCP server "${name}"; servers: ${rows.map((r) => r.name).join(", ") || "none"}`);
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ ...row, status: row.state }, null, 2)}\n`);
    return 0;
  }
  const lines = [
    `${row.name}  (${row.source}, ${row.transport}${row.trust === "n/a" ? "" : `, ${row.trust}`})`,
    `status: ${row.state}${row.error ? ` — ${row.error}` : ""}`,
    ...(row.logFile ? [`log: ${row.logFile}`] : []),
    `tools (${row.tools.length}):`,
    ...row.tools.map((t) => `  ${t}`),
  ];
  process.stdout.write(`${terminalText(lines.join("\n"))}\n`);
  return 0;
}

/**
 * `keen mcp trust`: records the workspace's `.mcp.json` as trusted, bound to
 * its content hash; secret-looking variables it reads must be named with
 * `--allow-env`. Shows what will run, so the decision is an informed one.
 */
export async function mcpTrust(flags: { cwd?: string; allowEnv?: string }): Promise<number> {
  const paths = keenPaths();
  const workspace = findWorkspace(resolve(flags.cwd ?? process.cwd()));
  const file = projectMcpFile(workspace);
  if (!existsSync(file)) throw new UsageError(`no .mcp.json in ${workspace}`);
  const bytes = readFileSync(file);
  const parsed = parseMcpFile(file, bytes);
  if ("error" in parsed) throw new UsageError(parsed.error);
  const allowEnv = (flags.allowEnv ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  // The hash of what was shown and checked, not of the file read again.
  writeTrust(paths.configFile, workspace, { sha256: hashBytes(bytes), ...(allowEnv.length ? { allowEnv } : {}) });
  const out = [`Trusted ${file} (any change to it revokes this). Its servers:`];
  const secret = new Set<string>();
  for (const [name, config] of Object.entries(parsed.servers)) {
    out.push(`  ${name}: ${"command" in config ? [config.command, ...(config.args ?? [])].join(" ") : config.url}`);
    for (const v of referencedVariables(config)) if (isSecretEnvName(v) && !allowEnv.includes(v)) secret.add(v);
  }
  process.stdout.write(`${terminalText(out.join("\n"))}\n`);
  if (secret.size) {
    process.stderr.write(`keen: not given to these servers: ${[...secret].join(", ")} (secret-looking); allow them with --allow-env ${[...secret].join(",")}\n`);
  }
  return 0;
}

/** `keen mcp untrust`: forgets the workspace's trust decision. */
export async function mcpUntrust(flags: { cwd?: string }): Promise<number> {
  const paths = keenPaths();
  const workspace = findWorkspace(resolve(flags.cwd ?? process.cwd()));
  const config = loadConfig(paths, workspace);
  if (!config.mcpTrust?.[workspace]) {
    process.stdout.write(`${workspace} was not trusted.\n`);
    return 0;
  }
  writeTrust(paths.configFile, workspace, undefined);
  process.stdout.write(`${workspace}: .mcp.json no longer trusted${currentTrust(config.mcpTrust, workspace) ? "" : " (it had changed since it was trusted)"}.\n`);
  return 0;
}
