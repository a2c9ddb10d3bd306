import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import * as z from "zod";
import type { PermissionMode } from "../../protocol/commands.js";
import { lazy } from "../../protocol/lazy.js";
import { permissionModeSchema } from "../../protocol/mode-schema.js";
import { stricterMode } from "../permissions/policy.js";
import { mcpServersSchema } from "../mcp/config.js";
import { hooksSchema, type HooksConfig } from "../extensions/hooks-config.js";
import { BUILTIN_PROVIDERS, PROVIDER_KINDS, type ProviderPreset } from "../providers/registry.js";
import { configChecks, type ConfigChecks } from "./config-check.js";
import { UsageError } from "./errors.js";

/** `sandbox.mode` and `--sandbox`: confine bash always, never, or when the platform can (the default). */
export const SANDBOX_MODES = ["on", "off", "auto"] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/**
 * The user's and the project's config schemas, built on first use: a run whose config this build has
 * checked before never builds them (./config-check.ts), and then never loads zod (protocol/lazy.ts).
 */
function makeSchemas() {
  const SandboxModeSchema = z.enum(SANDBOX_MODES);

  const ModelInfoSchema = z.strictObject({
    contextWindow: z.number().int().positive().optional(),
    maxOutputTokens: z.number().int().positive().optional(),
    thinkingBudget: z.number().int().positive().optional(),
    refuses: z.array(z.string()).optional(),
    /** The model takes images (prompt images, read_file on an image); false: they reach it as a text note. */
    images: z.boolean().optional(),
    /** US dollars per million tokens; sets or overrides the built-in price. */
    price: z.strictObject({
      input: z.number().nonnegative(), output: z.number().nonnegative(),
      cacheRead: z.number().nonnegative().optional(), cacheWrite: z.number().nonnegative().optional(),
    }).optional(),
  });

  const ProviderSchema = z.strictObject({
    kind: z.enum(PROVIDER_KINDS).optional(),
    baseURL: z.url({ protocol: /^https?$/, error: "not an http(s) URL" }).optional(),
    apiKeyEnv: z.string().optional(),
    keyOptional: z.boolean().optional(),
    authStyle: z.enum(["bearer", "x-api-key"]).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    defaultModel: z.string().optional(),
    /** Whether its models take images, unless a model says otherwise (default: true for kind anthropic, the openai and openrouter presets). */
    images: z.boolean().optional(),
    models: z.record(z.string(), ModelInfoSchema).optional(),
  });

  const ToolPrefsSchema = z.strictObject({
    allowed: z.array(z.string()).optional(),
    disallowed: z.array(z.string()).optional(),
  });

  /** The user's config file. */
  const UserConfigSchema = z.strictObject({
    model: z.string().optional(),
    providers: z.record(z.string(), ProviderSchema).optional(),
    tools: ToolPrefsSchema.optional(),
    retry: z.strictObject({
      maxRetries: z.number().int().min(0).max(20).optional(),
      maxWaitMs: z.number().int().min(0).optional(),
      idleTimeoutMs: z.number().int().positive().optional(),
      baseDelayMs: z.number().int().min(0).optional(),
    }).optional(),
    stdinGraceMs: z.number().int().min(0).optional(),
    maxTurns: z.number().int().positive().optional(),
    permissionMode: permissionModeSchema().optional(),
    /** Automatic context compaction (see docs/PROTOCOL.md "Compaction"). */
    compaction: z.strictObject({
      /** Off: no automatic compaction (overflow recovery and manual compaction still work). */
      auto: z.boolean().optional(),
      /** Share of the context window (prompt plus expected output) that triggers compaction; default 0.8. */
      threshold: z.number().min(0.1).max(1).optional(),
      /** Tokens of recent messages kept verbatim; default a fifth of the window, at most 20,000. */
      keepTokens: z.number().int().min(0).optional(),
    }).optional(),
    guard: z.strictObject({ allowProjectConfigEdits: z.boolean().optional() }).optional(),
    /** MCP servers of every session (README "MCP servers"); `.mcp.json` and `--mcp-config` add to them. */
    mcpServers: mcpServersSchema().optional(),
    /** Timeouts for every MCP server (a server's own `connectTimeoutMs`/`callTimeoutMs` win). */
    mcp: z.strictObject({
      /** From start to tool list; default 10,000. */
      connectTimeoutMs: z.number().int().positive().optional(),
      /** One tool call; default 300,000 (5 minutes). */
      callTimeoutMs: z.number().int().positive().optional(),
    }).optional(),
    /** Workspaces whose `.mcp.json` the user trusted (`keen mcp trust`), by path, bound to the file's content hash. */
    mcpTrust: z.record(z.string(), z.strictObject({
      sha256: z.string(), allowEnv: z.array(z.string()).optional(), declined: z.boolean().optional(),
    })).optional(),
    /** Hooks of every session (docs/extensions.md "Hooks"), in Claude Code's shape. */
    hooks: hooksSchema().optional(),
    /** Workspaces whose project hooks the user trusted (`keen trust`), bound to the digest of the hooks and the scripts they name. */
    hooksTrust: z.record(z.string(), z.strictObject({ sha256: z.string(), declined: z.boolean().optional() })).optional(),
    /** README "Sandbox": confine bash (`--sandbox` wins; a project may only turn it on). */
    sandbox: z.strictObject({
      mode: SandboxModeSchema.optional(),
      network: z.strictObject({
        /** Hosts sandboxed commands may reach (e.g. "registry.npmjs.org", "*.github.com", "127.0.0.1:8080"). */
        allowedDomains: z.array(z.string().min(1)).optional(),
      }).optional(),
      /** With the sandbox on, accept-edits runs bash without asking (default true); false keeps asking. */
      acceptEditsRunsBash: z.boolean().optional(),
    }).optional(),
    /** web_fetch (docs/config.md "web"; docs/security.md "web_fetch"). User config only: a project cannot widen it. */
    web: z.strictObject({
      /** Hosts fetched without asking in every mode, loopback and private addresses included (patterns as sandbox.network's). */
      allowedDomains: z.array(z.string().min(1)).optional(),
      /** Hosts never fetched; they win over every allow. */
      deniedDomains: z.array(z.string().min(1)).optional(),
      /** One fetch, redirects and body included; default 30,000. */
      timeoutMs: z.number().int().positive().optional(),
    }).optional(),
    /** grep and glob (docs/config.md "search"). User config only. */
    search: z.strictObject({
      /** One grep or glob call is stopped after this many milliseconds; default 10,000. */
      budgetMs: z.number().int().positive().optional(),
    }).optional(),
    /** The TUI's theme: dark, light, high-contrast, or a theme file (`--theme` wins). */
    theme: z.string().optional(),
    /** The TUI (docs/tui.md): mouse capture at start (Alt-M switches it) and terminal notifications. */
    tui: z.strictObject({
      mouse: z.boolean().optional(),
      notify: z.enum(["unfocused", "always", "never"]).optional(),
      notifyWith: z.enum(["bell", "osc9", "osc777"]).optional(),
    }).optional(),
    /** The CLI runner (README "CLI runner"): turns run by an external agent CLI. User config only. */
    agents: z.strictObject({
      defaults: z.strictObject({
        cli: z.strictObject({
          /** Run turns through the CLI unless `--runner embedded` says otherwise. */
          enabled: z.boolean().optional(),
          /** The executable; default "claude". */
          path: z.string().min(1).optional(),
          /** Extra arguments after Keen's own. */
          flags: z.array(z.string()).optional(),
          /** Pass `--dangerously-skip-permissions` (and map `auto` to bypassPermissions). */
          skipPermissions: z.boolean().optional(),
          /** Kill the CLI after this many milliseconds. */
          timeoutMs: z.number().int().positive().optional(),
        }).optional(),
      }).optional(),
    }).optional(),
  });

  /**
   * A project's `.keen/config.json`: the model and settings that limit Keen. A
   * hostile repository must not redirect your key, so base URLs, key variables,
   * headers and guard settings are refused here, and its limits only narrow
   * yours (see narrowLimits).
   */
  const ProjectConfigSchema = z.strictObject({
    model: z.string().optional(),
    tools: ToolPrefsSchema.optional(),
    maxTurns: z.number().int().positive().optional(),
    permissionMode: permissionModeSchema().optional(),
    /** Only the mode: a project may turn the sandbox on (see sandboxModeFor), never widen its network. */
    sandbox: z.strictObject({ mode: SandboxModeSchema.optional() }).optional(),
    /** The project's hooks: they run only after `keen trust` (docs/extensions.md "Hooks"). */
    hooks: hooksSchema().optional(),
  });
  return { user: UserConfigSchema, project: ProjectConfigSchema };
}
/** The user's and the project's schemas (exported for tests). */
export const configSchemas = lazy(makeSchemas);
export type UserConfig = z.infer<ReturnType<typeof makeSchemas>["user"]>;
type ProjectConfig = z.infer<ReturnType<typeof makeSchemas>["project"]>;
interface Configs {
  user: UserConfig;
  project: ProjectConfig;
}
const PROJECT_FORBIDDEN = ["providers", "baseURL", "apiKeyEnv", "apiKey", "headers", "guard", "retry", "agents", "mcpServers", "mcpTrust", "mcp", "hooksTrust", "web", "search"];

/**
 * Runs zod's first parse of both config schemas on a config that uses every
 * field, which compiles their fast paths. Called when the start-up snapshot is
 * built (app/cli/warm.ts), so a run's config check starts warm.
 */
export function warmConfigSchemas(): void {
  const tools = { allowed: ["some_tool"], disallowed: ["other_tool"] };
  const models = { m: { contextWindow: 1000, maxOutputTokens: 100, thinkingBudget: 10, refuses: ["temperature"], images: false } };
  configSchemas().user.parse({
    model: "p/m",
    providers: {
      p: {
        kind: "openai", baseURL: "http://localhost:1/v1", apiKeyEnv: "P_KEY", keyOptional: true, authStyle: "bearer",
        headers: { "x-h": "v" }, defaultModel: "m", images: true, models,
      },
    },
    tools,
    retry: { maxRetries: 1, maxWaitMs: 1, idleTimeoutMs: 1, baseDelayMs: 0 },
    stdinGraceMs: 0,
    maxTurns: 1,
    permissionMode: "ask",
    guard: { allowProjectConfigEdits: false },
    theme: "dark",
  });
  configSchemas().project.parse({ model: "p/m", tools, maxTurns: 1, permissionMode: "ask" });
}

/** Where config and data live. */
export interface KeenPaths {
  configFile: string;
  dataDir: string;
}

/** `$KEEN_HOME` holds both; otherwise the XDG locations. */
export function keenPaths(env: NodeJS.ProcessEnv = process.env): KeenPaths {
  if (env.KEEN_HOME) return { configFile: join(env.KEEN_HOME, "config.json"), dataDir: env.KEEN_HOME };
  const home = homedir();
  const configHome = env.XDG_CONFIG_HOME || join(home, ".config");
  const dataHome = env.XDG_DATA_HOME || join(home, ".local", "share");
  return { configFile: join(configHome, "keen", "config.json"), dataDir: join(dataHome, "keen") };
}

/**
 * Config after merging the user file, the project file and the built-in
 * presets. The limiting settings are not fields of their own: they are kept
 * per source and combined only by `limitsFor`, so no caller can read the
 * user's value and miss the project's narrowing.
 */
export interface ResolvedConfig extends Omit<UserConfig, "tools" | "maxTurns" | "permissionMode"> {
  providers: Record<string, ProviderPreset>;
  /** The limits the user's config sets. */
  userLimits: Limits;
  /** The limits `.keen/config.json` sets; they only narrow (see narrowLimits). */
  projectLimits: Limits;
  /** `.keen/config.json`'s `sandbox.mode`: it only tightens (see sandboxModeFor). */
  projectSandboxMode?: SandboxMode;
  /** `.keen/config.json`'s hooks: they run only once trusted (app/extensions/hooks-config.ts). */
  projectHooks?: HooksConfig;
}

const SANDBOX_ORDER: SandboxMode[] = ["off", "auto", "on"];

/**
 * The sandbox mode of a run: the flag, else the user's config, else auto; then the
 * project's mode if it is stricter (off < auto < on), so a repository can turn the
 * sandbox on but never off, like narrowLimits for the other limits.
 */
export function sandboxModeFor(config: ResolvedConfig, flag?: SandboxMode): SandboxMode {
  const user = flag ?? config.sandbox?.mode ?? "auto";
  const project = config.projectSandboxMode;
  return project && SANDBOX_ORDER.indexOf(project) > SANDBOX_ORDER.indexOf(user) ? project : user;
}

/** The settings that limit what Keen may do. Absent means "no limit from this source". */
export interface Limits {
  /** Tools the model may be offered; absent: every tool. */
  allowedTools?: string[];
  /** Tools the model is never offered. */
  disallowedTools?: string[];
  /** Model requests per run. */
  maxTurns?: number;
  permissionMode?: PermissionMode;
}

/**
 * THE merge rule between the user (their config, or their flags over it) and a
 * project's `.keen/config.json`, which may come from a hostile repository: the
 * project only narrows, never widens.
 * - disallowed tools: the union — an empty or shorter project list re-enables nothing;
 * - allowed tools: the intersection (absent on one side: the other side's list);
 * - maxTurns: the minimum;
 * - permissionMode: the stricter of the two (auto < accept-edits < ask < read-only).
 * `defaultMode` stands for the user's mode when they set none (the front end's
 * default), so a project cannot loosen a default it does not see.
 */
export function narrowLimits(user: Limits, project: Limits, defaultMode?: PermissionMode): Limits {
  const disallowed = union(user.disallowedTools, project.disallowedTools);
  const allowed = user.allowedTools && project.allowedTools
    ? user.allowedTools.filter((name) => project.allowedTools!.includes(name))
    : (user.allowedTools ?? project.allowedTools);
  const maxTurns = user.maxTurns !== undefined && project.maxTurns !== undefined
    ? Math.min(user.maxTurns, project.maxTurns)
    : (user.maxTurns ?? project.maxTurns);
  const mode = stricterMode(user.permissionMode ?? defaultMode, project.permissionMode);
  return {
    ...(allowed ? { allowedTools: allowed } : {}),
    ...(disallowed ? { disallowedTools: disallowed } : {}),
    ...(maxTurns !== undefined ? { maxTurns } : {}),
    ...(mode ? { permissionMode: mode } : {}),
  };
}

export { stricterMode };

/**
 * The limits a run uses: each flag the user passed replaces that setting of
 * their config (flags are the user too), then the project narrows the result.
 */
export function limitsFor(config: ResolvedConfig, flags: Limits = {}, defaultMode?: PermissionMode): Limits {
  const user: Limits = {
    allowedTools: flags.allowedTools ?? config.userLimits.allowedTools,
    disallowedTools: flags.disallowedTools ?? config.userLimits.disallowedTools,
    maxTurns: flags.maxTurns ?? config.userLimits.maxTurns,
    permissionMode: flags.permissionMode ?? config.userLimits.permissionMode,
  };
  return narrowLimits(user, config.projectLimits, defaultMode);
}

function union(a: string[] | undefined, b: string[] | undefined): string[] | undefined {
  if (!a || !b) return a ?? b;
  return [...new Set([...a, ...b])];
}

function limitsOf(config: UserConfig | ProjectConfig): Limits {
  return {
    allowedTools: config.tools?.allowed,
    disallowedTools: config.tools?.disallowed,
    maxTurns: config.maxTurns,
    permissionMode: config.permissionMode,
  };
}

/** Loads and validates config. Throws UsageError (exit 2) naming file, field and expectation. */
export function loadConfig(paths: KeenPaths, workspace: string): ResolvedConfig {
  const checks = configChecks(paths.dataDir);
  const user: UserConfig = readUser(paths.configFile, checks) ?? {};
  const projectFile = join(workspace, ".keen", "config.json");
  const project: ProjectConfig = readProject(projectFile, checks) ?? {};
  const providers: Record<string, ProviderPreset> = { ...BUILTIN_PROVIDERS };
  for (const [id, override] of Object.entries(user.providers ?? {})) {
    const base = providers[id];
    if (!base && (!override.kind || !override.defaultModel)) {
      throw new UsageError(`${paths.configFile}: providers.${id}: a new provider needs "kind" and "defaultModel"`);
    }
    providers[id] = { ...base!, ...override, models: { ...base?.models, ...override.models } } as ProviderPreset;
  }
  const { tools: _tools, maxTurns: _maxTurns, permissionMode: _mode, ...rest } = user;
  return {
    ...rest,
    model: project.model ?? user.model,
    providers,
    userLimits: limitsOf(user),
    projectLimits: limitsOf(project),
    ...(project.sandbox?.mode ? { projectSandboxMode: project.sandbox.mode } : {}),
    ...(project.hooks ? { projectHooks: project.hooks } : {}),
  };
}

function readProject(file: string, checks: ConfigChecks): ProjectConfig | undefined {
  if (!existsSync(file)) return undefined;
  const text = readText(file);
  const raw = parseText(file, text);
  if (raw && typeof raw === "object") {
    for (const key of Object.keys(raw)) {
      if (PROJECT_FORBIDDEN.includes(key)) {
        throw new UsageError(
          `${file}: "${key}" is not allowed in a project config (base URLs, key variables, headers, guard, CLI runner, MCP and web_fetch settings belong in your own config; a project's MCP servers go in .mcp.json); remove it`,
        );
      }
    }
  }
  return checked(file, text, raw, "project", checks);
}

function readUser(file: string, checks: ConfigChecks): UserConfig | undefined {
  if (!existsSync(file)) return undefined;
  const text = readText(file);
  return checked(file, text, parseText(file, text), "user", checks);
}

/** The config as parsed by its schema; without zod when this build found the very same text valid before (./config-check.ts). */
function checked<K extends keyof Configs>(file: string, text: string, raw: unknown, schema: K, checks: ConfigChecks): Configs[K] {
  if (checks.has(schema, text)) return raw as Configs[K];
  const config = validate(file, raw, configSchemas()[schema]) as Configs[K];
  checks.add(schema, text);
  return config;
}

function readText(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`${file}: cannot be read (${error instanceof Error ? error.message : String(error)})`);
  }
}

function parseText(file: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${file}: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

function validate<T extends z.ZodType>(file: string, raw: unknown, schema: T): z.infer<T> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.length ? issue.path.join(".") : "(top level)";
  throw new UsageError(`${file}: ${path}: ${issue.message}`);
}
