import * as z from "zod";
import { lazy } from "../../protocol/lazy.js";

/**
 * One MCP server as users already write it (Claude Code's `.mcp.json`, Cursor,
 * Gemini CLI): a command to spawn, or an HTTP URL. Unknown fields other tools
 * add (`disabled`, `alwaysAllow`, ...) are ignored, so an existing file works.
 */
const makeServerSchema = () => z.union([
  z.object({
    type: z.literal("stdio").optional(),
    command: z.string().min(1),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
    /** Run the command inside the session's sandbox (README "Sandbox"); refused when the session has none (see startMcp). */
    sandbox: z.boolean().optional(),
    connectTimeoutMs: z.number().int().positive().optional(),
    callTimeoutMs: z.number().int().positive().optional(),
  }),
  z.object({
    /** `http` speaks Streamable HTTP and falls back to legacy SSE; `sse` goes to SSE directly. */
    type: z.enum(["http", "streamable-http", "sse"]).optional(),
    url: z.string().min(1),
    headers: z.record(z.string(), z.string()).optional(),
    connectTimeoutMs: z.number().int().positive().optional(),
    callTimeoutMs: z.number().int().positive().optional(),
  }),
], { error: 'an MCP server needs "command" (stdio) or "url" (http, sse)' });
export const mcpServerSchema = lazy(makeServerSchema);
export type McpServerConfig = z.infer<ReturnType<typeof makeServerSchema>>;

/**
 * Servers by name. Names become part of tool names (`mcp__<server>__<tool>`),
 * so they stay in the providers' alphabet.
 */
export const mcpServersSchema = lazy(() => z.record(z.string(), mcpServerSchema()).superRefine((servers, ctx) => {
  for (const name of Object.keys(servers)) {
    if (!/^[A-Za-z0-9_-]{1,40}$/.test(name)) ctx.addIssue({ code: "custom", path: [name], message: "server names use letters, digits, _ and - (at most 40)" });
  }
}));

/** `{"mcpServers": {...}}`: the file format of `.mcp.json` and `--mcp-config`. */
export const mcpFileSchema = lazy(() => z.object({ mcpServers: mcpServersSchema() }));

/**
 * Where a server's configuration came from; project servers need the user's
 * trust. `client`: handed over by a front end's client for one session (ACP's
 * `session/new` `mcpServers`), trusted like a flag.
 */
export type McpSource = "user" | "flag" | "project" | "client";

/** A server after expansion, ready to start. `error` says why it cannot start (it is reported, never fatal). */
export interface McpServerSpec {
  name: string;
  source: McpSource;
  /** The file it came from. */
  file: string;
  config: McpServerConfig;
  error?: string;
}

/** Settings for every server (user config `mcp`). */
export interface McpSettings {
  /** Per server, from spawn to its tool list (default 10 s). */
  connectTimeoutMs: number;
  /** Per tool call (default 5 minutes). */
  callTimeoutMs: number;
}

export const DEFAULT_MCP_SETTINGS: McpSettings = { connectTimeoutMs: 10_000, callTimeoutMs: 300_000 };

/** Which variables `${VAR}` may read in a file of this source. */
export interface ExpansionRules {
  env: NodeJS.ProcessEnv;
  /** Never expanded (a project file: Keen's provider key variables). */
  forbidden: Set<string>;
  /** When set, secret-looking names expand only if listed here (a project file: what the trust decision named). */
  secretAllowed?: Set<string>;
  isSecretName: (name: string) => boolean;
}

/**
 * Expands `${VAR}` and `${VAR:-default}` in args, env, headers, url and cwd.
 * Returns the expanded config, or the reason it cannot be used (an unset
 * variable without default, a variable the rules refuse).
 */
export function expandServer(config: McpServerConfig, rules: ExpansionRules): { config: McpServerConfig } | { error: string } {
  const problems: string[] = [];
  const one = (text: string) => text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_match, name: string, fallback?: string) => {
    if (rules.forbidden.has(name)) {
      problems.push(`\${${name}} is a provider key and is never given to a project's MCP server`);
      return "";
    }
    if (rules.secretAllowed && rules.isSecretName(name) && !rules.secretAllowed.has(name)) {
      problems.push(`\${${name}} looks secret; allow it with \`keen mcp trust --allow-env ${name}\``);
      return "";
    }
    const value = rules.env[name];
    if (value !== undefined && value !== "") return value;
    if (fallback !== undefined) return fallback;
    problems.push(`\${${name}} is not set`);
    return "";
  });
  const map = (record?: Record<string, string>) => record && Object.fromEntries(Object.entries(record).map(([k, v]) => [k, one(v)]));
  const expanded: McpServerConfig = "command" in config
    ? { ...config, command: one(config.command), args: config.args?.map(one), env: map(config.env), cwd: config.cwd === undefined ? undefined : one(config.cwd) }
    : { ...config, url: one(config.url), headers: map(config.headers) };
  if (problems.length) return { error: problems.join("; ") };
  return { config: expanded };
}

/** Variable names a config refers to with `${…}`. */
export function referencedVariables(config: McpServerConfig): string[] {
  const names = new Set<string>();
  for (const match of JSON.stringify(config).matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)) names.add(match[1]!);
  return [...names];
}

/** The values a server's config holds that count as secrets: every header and env value. */
export function secretValues(config: McpServerConfig): string[] {
  if ("command" in config) return Object.values(config.env ?? {});
  return Object.values(config.headers ?? {});
}
