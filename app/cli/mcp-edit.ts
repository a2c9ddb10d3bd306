import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { mcpServerSchema, type McpServerConfig } from "../mcp/config.js";
import { readJsonObject, writeJsonAtomic } from "../mcp/config-file.js";
import { currentTrust, hashBytes, projectMcpFile, writeTrust } from "../mcp/trust.js";
import { terminalText } from "../headless/terminal-text.js";
import { findWorkspace } from "../tools/workspace.js";
import { keenPaths, loadConfig, type KeenPaths } from "./config.js";
import { UsageError } from "./errors.js";

/** Flags of `keen mcp add`, as Claude Code spells them. */
interface AddFlags {
  scope?: string;
  transport?: string;
  env?: string[];
  header?: string[];
  cwd?: string;
}

type Scope = "user" | "project";

/**
 * Where a scope writes. Claude Code's default scope, `local` (you, in this
 * project only, kept outside the repository), has no Keen equivalent: Keen
 * reads no per-project private MCP config, so it is refused rather than
 * quietly widened to every workspace (user) or shared with the repository (project).
 */
function scopeOf(value: string | undefined): Scope {
  if (value === undefined || value === "user") return "user";
  if (value === "project") return "project";
  if (value === "local") {
    throw new UsageError("--scope local: Keen has no per-project private MCP config; use --scope user (your config, every workspace) or --scope project (.mcp.json, shared with the repository)");
  }
  throw new UsageError(`--scope ${value}: expected user or project`);
}

function fileOf(scope: Scope, paths: KeenPaths, workspace: string): string {
  return scope === "user" ? paths.configFile : projectMcpFile(workspace);
}

const NAME = /^[A-Za-z0-9_-]{1,40}$/;

/** `-e KEY=VALUE` and `--header "Name: value"`, checked first: a variadic -e swallows a name written after it. */
function pairsOf(flags: AddFlags): { env: Record<string, string>; headers: Record<string, string> } {
  const env: Record<string, string> = {};
  for (const pair of flags.env ?? []) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(pair);
    if (!match) throw new UsageError(`-e ${pair}: expected KEY=VALUE (put the server name before -e, or end the list with --)`);
    env[match[1]!] = match[2]!;
  }
  const headers: Record<string, string> = {};
  for (const line of flags.header ?? []) {
    const match = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):(.*)$/s.exec(line);
    if (!match) throw new UsageError(`--header ${line}: expected "Name: value"`);
    headers[match[1]!] = match[2]!.trim();
  }
  return { env, headers };
}

/** The server config `keen mcp add` would write, in the shape Claude Code writes to `.mcp.json`. */
function serverFromFlags(target: string | undefined, args: string[], flags: AddFlags): McpServerConfig {
  const { env, headers } = pairsOf(flags);
  const transport = flags.transport ?? "stdio";
  if (transport === "stdio") {
    if (!target) throw new UsageError("missing the command: keen mcp add <name> [-e KEY=VALUE…] -- <command> [args…]");
    if (/^https?:\/\//i.test(target) && flags.transport === undefined) throw new UsageError(`${target} is a URL: add --transport http (or sse)`);
    if (flags.header?.length) throw new UsageError("--header is for http and sse servers; a stdio server takes -e KEY=VALUE");
    return { type: "stdio", command: target, args, env };
  }
  if (transport !== "http" && transport !== "sse") throw new UsageError(`--transport ${transport}: expected stdio, http or sse`);
  if (!target) throw new UsageError(`missing the URL: keen mcp add --transport ${transport} <name> <url>`);
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new UsageError(`${target}: not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`${target}: not an http or https URL`);
  if (args.length) throw new UsageError(`unexpected arguments after the URL: ${args.join(" ")}`);
  if (flags.env?.length) throw new UsageError("-e is for stdio servers; an http or sse server takes --header");
  return { type: transport, url: target, ...(Object.keys(headers).length ? { headers } : {}) };
}

/** The `mcpServers` object of a config file's JSON (a copy), refusing one that is not an object. */
function serversIn(file: string, raw: Record<string, unknown>): Record<string, unknown> {
  const servers = raw.mcpServers ?? {};
  if (!servers || typeof servers !== "object" || Array.isArray(servers)) throw new UsageError(`${file}: mcpServers is not an object; fix it first`);
  return { ...(servers as Record<string, unknown>) };
}

/**
 * Writes a changed `mcpServers` to `file`, every other key as it was. A
 * project `.mcp.json` that was trusted stays trusted (the only change is the
 * user's own); one that was not is reported, since its servers will not start.
 */
function writeServers(scope: Scope, file: string, raw: Record<string, unknown>, servers: Record<string, unknown>, paths: KeenPaths, workspace: string): void {
  const before = existsSync(file) ? readFileSync(file) : undefined;
  const trusted = scope === "project" && before ? currentTrust(loadConfig(paths, workspace).mcpTrust, workspace, before) : undefined;
  writeJsonAtomic(file, { ...raw, mcpServers: servers }, scope === "user" ? 0o600 : 0o644);
  if (scope !== "project") return;
  if (trusted) {
    writeTrust(paths.configFile, workspace, { ...trusted, sha256: hashBytes(readFileSync(file)) });
    process.stderr.write("keen: .mcp.json was trusted and stays trusted (the change is yours)\n");
  }
  else process.stderr.write("keen: this workspace's .mcp.json is not trusted: its servers start once you run `keen mcp trust`\n");
}

function describe(config: McpServerConfig): string {
  return "command" in config ? [config.command, ...(config.args ?? [])].join(" ") : config.url;
}

/** `keen mcp add`: a stdio server (`-- <command> [args…]`) or, with `--transport http|sse`, a URL. */
export async function mcpAdd(name: string | undefined, target: string | undefined, args: string[], flags: AddFlags): Promise<number> {
  pairsOf(flags);
  if (!name) throw new UsageError("missing the server name: keen mcp add <name> …");
  if (!NAME.test(name)) throw new UsageError(`server name ${name}: letters, digits, _ and - (at most 40)`);
  const config = serverFromFlags(target, args, flags);
  const checked = mcpServerSchema().safeParse(config);
  if (!checked.success) throw new UsageError(checked.error.issues[0]!.message);
  const scope = scopeOf(flags.scope);
  const paths = keenPaths();
  const workspace = findWorkspace(resolve(flags.cwd ?? process.cwd()));
  const file = fileOf(scope, paths, workspace);
  const raw = readJsonObject(file);
  const servers = serversIn(file, raw);
  if (name in servers) throw new UsageError(`server "${name}" is already in ${file}; keen mcp remove ${name} --scope ${scope} first`);
  servers[name] = config;
  writeServers(scope, file, raw, servers, paths, workspace);
  process.stdout.write(`${terminalText(`Added ${"command" in config ? "stdio" : config.type} MCP server "${name}" to ${file}: ${describe(config)}`)}\n`);
  return 0;
}

/** `keen mcp remove`: from the scope named, or from the one scope that has it. */
export async function mcpRemove(name: string, flags: { scope?: string; cwd?: string }): Promise<number> {
  const paths = keenPaths();
  const workspace = findWorkspace(resolve(flags.cwd ?? process.cwd()));
  const scopes: Scope[] = flags.scope === undefined ? ["user", "project"] : [scopeOf(flags.scope)];
  const found = scopes.filter((scope) => name in serversIn(fileOf(scope, paths, workspace), readJsonObject(fileOf(scope, paths, workspace))));
  if (!found.length) throw new UsageError(`no MCP server "${name}" in ${scopes.map((s) => fileOf(s, paths, workspace)).join(" or ")}`);
  if (found.length > 1) throw new UsageError(`server "${name}" is in your config and in .mcp.json: name one with --scope user or --scope project`);
  const scope = found[0]!;
  const file = fileOf(scope, paths, workspace);
  const raw = readJsonObject(file);
  const servers = serversIn(file, raw);
  delete servers[name];
  writeServers(scope, file, raw, servers, paths, workspace);
  process.stdout.write(`${terminalText(`Removed MCP server "${name}" from ${file}`)}\n`);
  return 0;
}
