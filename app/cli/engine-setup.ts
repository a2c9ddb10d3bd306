import { statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, resolve } from "node:path";
import { UnknownSessionError, type SessionMeta, type SessionStore } from "../../storage/store.js";
import type { EngineSetup, ModelChoice } from "../agent/engine-types.js";
import { createCompactionPolicy, type CompactionSettings } from "../agent/compaction.js";
import { createMaxStepsPolicy } from "../agent/max-steps.js";
import type { TurnPolicy } from "../agent/policy.js";
import { createStructuredOutput } from "../agent/structured-output.js";
import { buildSystemPrompt } from "../agent/system-prompt.js";
import { createCommandSource } from "../extensions/commands.js";
import { createSkillCatalog, type SkippedSkill } from "../extensions/skills.js";
import { terminalText } from "../headless/terminal-text.js";
import { createFileGuard } from "../permissions/file-guard.js";
import type { FileGuard } from "../permissions/guard.js";
import { createImageReader } from "../tools/prompt-images.js";
import { BUILTIN_PROVIDERS, modelInfo } from "../providers/registry.js";
import { DEFAULT_BASE_URLS } from "../providers/options.js";
import { preconnect } from "../providers/preconnect.js";
import { traceStartup } from "../startup-trace.js";
import type { FileAccess, Tool, WebSettings } from "../tools/tool.js";
import { createTools, toolEnv, withRedaction } from "../tools/index.js";
import { createFileRestorer } from "../tools/restore-file.js";
import { createFileLister } from "../tools/file-list.js";
import { findWorkspace } from "../tools/workspace.js";
import { JobRegistry } from "../tools/jobs.js";
import type { PermissionMode } from "../../protocol/commands.js";
import type { Redactor } from "../permissions/redact.js";
import type { McpServerConfig } from "../mcp/config.js";
import type { CassetteSetup } from "./cassette-setup.js";
import { limitsFor, loadConfig, sandboxModeFor, type KeenPaths, type ResolvedConfig, type SandboxMode } from "./config.js";
import { chooseSandbox, mcpConfinement } from "./sandbox-setup.js";
import { secretsRedactor } from "./secrets.js";
import { UsageError } from "./errors.js";
import type { LoadedSchema } from "./output-schema.js";
import { chooseModel, createProvider } from "./provider-setup.js";
import { agentModels, chooseAgentModel } from "./agent-models.js";
import { chooseRunner, cliSetup, type Runner } from "./cli-runner-setup.js";
import { mcpSecrets, mcpSources, openMcp } from "./mcp-setup.js";
import { sessionHooks } from "./hooks-setup.js";
import { checkToolNames, toolFilter } from "./run-flags.js";

/** What a front end's flags say about every session it runs. */
export interface FrontEndSettings {
  allowedTools?: string[];
  disallowedTools?: string[];
  maxTurns?: number;
  outputSchema?: LoadedSchema;
  headless: boolean;
  /** `--permission-mode` */
  permissionMode?: PermissionMode;
  /** The front end's mode when neither flags nor config set one (auto for keen run, ask elsewhere). */
  defaultMode: PermissionMode;
  /** `--record` / `--replay` (openCassette): the providers' requests are recorded or served from a cassette. */
  cassette?: CassetteSetup;
  /** `--runner`: beats the session's own runner and the config. */
  runner?: Runner;
  /** The runner a stored session's turns used (it beats the config): read for each session a front end prepares, so `resume-session` switches too. */
  runnerOf?: (sessionId: string) => Promise<Runner | undefined>;
  /**
   * An ACP client's editor, for the file tools' reads and writes (behind the guard). Such a
   * session has no `undo`: the engine's restorer works on the disk, and the editor has its own.
   */
  files?: FileAccess;
  /** `--mcp-config` files (README "MCP servers"). */
  mcpConfig?: string[];
  /** Servers the client gave for this front end's session (ACP `session/new` `mcpServers`, converted to Keen's shapes). */
  mcpServers?: Record<string, McpServerConfig>;
  /** False: no MCP server starts (a command that runs no tools, e.g. `sessions compact`). */
  mcp?: boolean;
  /** `--sandbox` */
  sandbox?: SandboxMode;
  /** Opens the provider's connection early (default app/providers/preconnect.ts's; false: it did not); tests inject their own. */
  preconnect?: (baseURL: string, env: NodeJS.ProcessEnv) => boolean | void;
  /** Told each set-up step as it starts ("preconnect", "sandbox", "tools", "mcp", "provider"): tests read the order. */
  trace?: (step: string) => void;
}

/** A session's setup and the config it came from (front ends read e.g. `stdinGraceMs`). */
export type PreparedSetup = EngineSetup & {
  config: ResolvedConfig;
  redactor: Redactor;
};

/**
 * Builds what a session needs (provider, tools, system prompt, per-turn
 * policies) for the engine, from config, flags and the session's directory.
 * Every call builds anew: the engine keeps the one cache of setups (and ends
 * a replaced one's MCP servers), and a front end asks it (`engine.prepare()`)
 * to turn every usage error into exit 2 before a session exists.
 */
export function createPreparer(paths: KeenPaths, settings: FrontEndSettings, env: NodeJS.ProcessEnv = process.env) {
  // One engine's background jobs, shared by its setups: switching the model keeps the dev server running; the engine's end (`end`) kills them.
  let jobs: JobRegistry | undefined;
  const jobsFor = (redactor: Redactor) => (jobs ??= new JobRegistry(redactor));
  return (session: { id: string; cwd: string; model?: string }): Promise<PreparedSetup> => prepare(paths, settings, env, session, jobsFor);
}

async function prepare(
  paths: KeenPaths, settings: FrontEndSettings, env: NodeJS.ProcessEnv, session: { id: string; cwd: string; model?: string },
  jobsFor: (redactor: Redactor) => JobRegistry,
): Promise<PreparedSetup> {
  const trace = (step: string) => {
    settings.trace?.(step);
    traceStartup(`setup ${step}`);
  };
  traceStartup("setup start");
  const cwd = resolve(session.cwd);
  if (!isDirectory(cwd)) throw new UsageError(`working directory ${cwd} does not exist`);
  const workspace = findWorkspace(cwd);
  const config = loadConfig(paths, workspace);
  const replay = settings.cassette?.replay;
  if (settings.cassette && settings.runner === "cli") {
    throw new UsageError("--record / --replay (or KEEN_RECORD) cannot be used with --runner cli: a cassette holds provider traffic, and the CLI's never passes through Keen");
  }
  const configDir = dirname(paths.configFile);
  const runner = replay ? "embedded" : chooseRunner(settings.runner, await settings.runnerOf?.(session.id), config);
  // The request's handshake starts as soon as its host is known and no usage error can follow, before the tools,
  // the sandbox probes, MCP servers, the SDK and the store's first write (app/providers/preconnect.ts).
  const choice = runner === "cli" ? undefined : replay ? replay.choose(session.model, config) : chooseModel(session.model, config, env);
  const limits = limitsFor(
    config,
    { allowedTools: settings.allowedTools, disallowedTools: settings.disallowedTools, maxTurns: settings.maxTurns, permissionMode: settings.permissionMode },
    settings.defaultMode,
  );
  const sources = settings.mcp === false ? undefined : mcpSources(paths, config, workspace, settings.mcpConfig, env, settings.mcpServers);
  // Usage errors still ahead wait for their checks first: tool lists against the built tools, `sandbox on` against the platform.
  const early = !(limits.allowedTools?.length || limits.disallowedTools?.length) && sandboxModeFor(config, settings.sandbox) !== "on";
  const connect = async () => {
    if (!choice || settings.cassette) return;
    const connected = (settings.preconnect ?? preconnect)(choice.baseURL ?? DEFAULT_BASE_URLS[choice.preset.kind], env);
    trace("preconnect");
    // One turn of the event loop sends the TLS ClientHello now; the rest of set-up below is synchronous work the reply arrives during.
    if (connected !== false) await new Promise((resolve) => setImmediate(resolve));
  };
  if (early) await connect();
  // A SKILL.md reached through a symlink is read only where read_file could read it (the guard is made next: it needs the skills' folders).
  const skills = createSkillCatalog({ configDir, workspace, home: homedir(), canRead: (path) => {
    const decision = guard.checkRead(path);
    return decision.ok ? undefined : decision.reason;
  } });
  // Keen's config directory (holding the config file) and data directory are off limits to its tools, but for reads in skill folders.
  const guard: FileGuard = createFileGuard({
    workspace, protectedPaths: [configDir, paths.dataDir], allowProjectConfigEdits: config.guard?.allowProjectConfigEdits,
    readableDirs: skills.readable,
  });
  // Hides known secrets from the model (tool output) and from every output (the engine redacts events with it).
  const redactor = secretsRedactor(env, config.providers, mcpSecrets(sources?.servers ?? []));
  // The CLI runs its own tools (its bash, its MCP servers): neither Keen's sandbox nor its MCP servers start for it.
  if (runner === "cli") {
    const previewTools = createTools({ cwd, workspace, guard, env: toolEnv(env), redactor, files: settings.files });
    return {
      ...prepareCli(config, settings, env, session, { redactor, allTools: previewTools }), listFiles: createFileLister(guard, cwd).list,
      hooks: sessionHooks(paths, config, workspace, env, { headless: settings.headless, claude: false }),
    };
  }
  if (!choice) throw new Error("unreachable: the embedded runner has a model choice");
  trace("sandbox");
  const { sandbox, fallback } = chooseSandbox(config, settings.sandbox, env, {
    workspace, protectedPaths: [dirname(paths.configFile), paths.dataDir], allowProjectConfigEdits: config.guard?.allowProjectConfigEdits,
    dataDir: paths.dataDir,
  });
  const jobs = jobsFor(redactor);
  // The same choice the subagent's resolver (agentModels, below) makes, without building its provider: for the task call's title.
  const agentModelRef = (name: string) => {
    try {
      const chosen = chooseAgentModel(name, { session: choice, config, env, ...(replay ? { choose: replay.choose } : {}) });
      return `${chosen.providerId}/${chosen.model}`;
    } catch {
      return undefined;
    }
  };
  trace("tools");
  const builtin = createTools({ cwd, workspace, guard, env: toolEnv(env), redactor, files: settings.files, sandbox, skills, configDir: dirname(paths.configFile), web: webSettings(config), jobs, agentModel: agentModelRef, ...(config.search?.budgetMs ? { searchBudgetMs: config.search.budgetMs } : {}) });
  if (settings.headless) reportSkipped(skills.current().skipped);
  const builtinNames = builtin.map((t) => t.definition.name);
  const { unknown } = checkToolNames(builtinNames, limits.allowedTools, limits.disallowedTools);
  if (unknown.some((entry) => !entry.startsWith("mcp__"))) {
    throw new UsageError(`unknown tool "${unknown.find((e) => !e.startsWith("mcp__"))}"; tools: ${builtinNames.join(", ")}`);
  }
  if (!early) await connect();
  trace("mcp");
  // Servers connect (each within its timeout) before the first request, so `mcp__` names are checked against what they offer.
  const mcp = sources ? await openMcp(paths, config, sources, cwd, env, mcpConfinement(sandbox, fallback)) : undefined;
  const mcpTools = () => (mcp?.handle?.tools() ?? []).map((tool) => (redactor.active ? withRedaction(tool, redactor) : tool));
  const nameAllowed = toolFilter(limits.allowedTools, limits.disallowedTools);
  // job_output and job_kill only with the shell tool that starts jobs (`--disallowed-tools bash` leaves no job to read).
  const shellOffered = builtin.some((t) => t.shell && nameAllowed(t.definition.name));
  const allowed = (name: string) => nameAllowed(name) && (shellOffered || !builtin.some((t) => t.jobControl && t.definition.name === name));
  const currentTools = () => [...builtin, ...mcpTools()].filter((t) => allowed(t.definition.name));
  const names = currentTools().map((t) => t.definition.name);
  const { mcpUnknown } = checkToolNames([...builtinNames, ...mcpTools().map((t) => t.definition.name)], limits.allowedTools, limits.disallowedTools);
  const mcpWarnings = mcpUnknown.map((entry) => `no MCP server offers a tool named "${entry}" (--allowed-tools, --disallowed-tools or config)`);
  const schema = settings.outputSchema;
  const maxTurns = limits.maxTurns;
  trace("provider");
  const provider = await createProvider(choice, session.id, undefined, settings.cassette?.fetchFor(session.id, choice, redactor));
  const agentModel = agentModels({
    session: choice, provider, sessionId: session.id, config, env,
    fetchFor: (other) => settings.cassette?.fetchFor(session.id, other, redactor), ...(replay ? { choose: replay.choose } : {}),
  });
  const instructions = schema ? createStructuredOutput(schema.schema, schema.check).instructions : undefined;
  const info = modelInfo(choice.preset, choice.model);
  const compaction: CompactionSettings = {
    window: info.contextWindow,
    threshold: config.compaction?.threshold ?? 0.8,
    keepTokens: config.compaction?.keepTokens ?? Math.min(20_000, Math.floor(info.contextWindow / 5)),
    reserveTokens: Math.min(info.maxOutputTokens, 8_192, Math.floor(info.contextWindow / 4)),
  };
  return {
    ...(settings.files ? {} : createFileRestorer(guard)),
    listFiles: createFileLister(guard, cwd).list,
    readImage: createImageReader(guard, cwd),
    ...createCommandSource({ configDir, workspace, cwd, guard }),
    listSkills: () => {
      const { skills: found, skipped } = skills.refresh();
      return { skills: found, skipped };
    },
    hooks: sessionHooks(paths, config, workspace, env, { headless: settings.headless, claude: true }),
    config,
    redactor,
    retry: config.retry,
    permissionMode: limits.permissionMode ?? settings.defaultMode,
    projectMode: config.projectLimits.permissionMode,
    sandbox: { sandboxed: Boolean(sandbox), fallback, bashConfined: Boolean(sandbox) && config.sandbox?.acceptEditsRunsBash !== false },
    modelRef: `${choice.providerId}/${choice.model}`,
    provider,
    agentModel,
    get tools() {
      return currentTools();
    },
    attach(emit) {
      jobs.onChange(({ id, ...job }) => void emit({ kind: "job", job_id: id, ...job }).catch(() => {}));
      mcp?.attach(emit, mcpWarnings);
    },
    close: async () => {
      // A sandbox started ahead for the next bash call (app/sandbox/spare.ts) ends with the session.
      sandbox?.close();
      await mcp?.handle?.close();
    },
    end: () => jobs.killAll(),
    jobs,
    system: buildSystemPrompt({ cwd, workspace, toolNames: names, extra: instructions, configDir, skills: skills.current().skills }),
    contextWindow: info.contextWindow,
    price: info.price,
    compaction,
    perTurn() {
      // Compaction first: it shapes the conversation the other policies' injections are added to.
      const policies: TurnPolicy[] = config.compaction?.auto === false ? [] : [createCompactionPolicy(provider, compaction)];
      const extra: Tool[] = [];
      const structured = schema ? createStructuredOutput(schema.schema, schema.check) : undefined;
      if (maxTurns) policies.push(createMaxStepsPolicy(maxTurns, settings.headless, Boolean(structured)));
      if (structured) {
        policies.push(structured);
        extra.push(structured.tool);
      }
      return { policies, tools: extra };
    },
  };
}

/** A session whose turns the external CLI runs: no provider, no tools of Keen's, no per-turn policies. */
function prepareCli(
  config: ResolvedConfig, settings: FrontEndSettings, env: NodeJS.ProcessEnv, session: { model?: string }, own: { redactor: Redactor; allTools: Tool[] },
): PreparedSetup {
  const limits = limitsFor(
    config,
    { allowedTools: settings.allowedTools, disallowedTools: settings.disallowedTools, maxTurns: settings.maxTurns, permissionMode: settings.permissionMode },
    settings.defaultMode,
  );
  const permissionMode = limits.permissionMode ?? settings.defaultMode;
  if (settings.outputSchema) throw new UsageError("--output-schema is not supported with the CLI runner: the CLI has no structured-output step Keen could check");
  const { redactor } = own;
  // Keen's edit tools (write_file, edit_file), never run here: they preview the CLI's Write and Edit asks through Keen's guard.
  const previewTools = own.allTools.filter((t) => t.kind === "edit");
  const cli = cliSetup(config, {
    model: session.model, mode: permissionMode, maxTurns: limits.maxTurns, allowedTools: limits.allowedTools, disallowedTools: limits.disallowedTools, env,
    previewTools,
  });
  return {
    config, redactor, retry: config.retry, permissionMode, projectMode: config.projectLimits.permissionMode,
    modelRef: cli.modelRef, tools: [], system: "", contextWindow: cli.contextWindow, backend: cli.backend,
    perTurn: () => ({ policies: [], tools: [] }),
  };
}

/** Checks a `set-model` reference against config and keys; throws UsageError naming what to set. */
export function checkModel(paths: KeenPaths, cwd: string, ref: string, env: NodeJS.ProcessEnv = process.env, cassette?: CassetteSetup): string {
  const config = loadConfig(paths, findWorkspace(cwd));
  const choice = cassette?.replay ? cassette.replay.choose(ref, config) : chooseModel(ref, config, env);
  return `${choice.providerId}/${choice.model}`;
}

/** The models of configured providers, for `list-models`: whether each provider's key is set (the engine marks the current one). */
export function listModels(config: ResolvedConfig | undefined, env: NodeJS.ProcessEnv = process.env): ModelChoice[] {
  const providers = config?.providers ?? BUILTIN_PROVIDERS;
  const out: ModelChoice[] = [];
  for (const [id, preset] of Object.entries(providers)) {
    const available = preset.keyOptional || Boolean(preset.apiKeyEnv && env[preset.apiKeyEnv]);
    const names = new Set([preset.defaultModel, ...Object.keys(preset.models)]);
    for (const name of names) {
      const model = `${id}/${name}`;
      out.push({ model, provider: id, available: Boolean(available) });
    }
  }
  return out;
}

const reportedSkills = new Set<string>();

/** One stderr line per unusable skill folder, once per process (a headless run has no /skills to show it). */
function reportSkipped(skipped: SkippedSkill[]): void {
  for (const s of skipped) {
    if (reportedSkills.has(s.path)) continue;
    reportedSkills.add(s.path);
    process.stderr.write(`keen: skill skipped: ${terminalText(s.path)}: ${terminalText(s.reason)}\n`);
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** How a front end names the stored session it starts in. */
export interface SessionChoice {
  /** `--session`/`--resume`: an id or unique prefix. */
  id?: string;
  /** `--continue`: the most recent session of this (resolved) directory. */
  continueIn?: string;
  /** How to start a first session there, for the error when there is none (`keen run "…"`). */
  start?: string;
}

/**
 * The stored session a front end starts in (`--session`, or `--continue`'s
 * latest of a directory), or none; an unknown id, or no session to continue,
 * is a usage error (exit 2).
 */
export async function storedSession(store: SessionStore, choice: string | SessionChoice | undefined): Promise<SessionMeta | undefined> {
  const { id: idOrPrefix, continueIn, start } = typeof choice === "string" ? { id: choice } : (choice ?? {});
  if (continueIn !== undefined) {
    const latest = (await store.list()).filter((s) => s.cwd === continueIn).sort((a, b) => b.updated - a.updated)[0];
    if (!latest) throw new UsageError(`--continue: no session in ${continueIn} yet; start one with ${start ?? 'keen run "…"'}`);
    return latest;
  }
  if (!idOrPrefix) return undefined;
  try {
    return await store.resolve(idOrPrefix);
  } catch (error) {
    if (error instanceof UnknownSessionError) throw new UsageError(error.message, "unknown_session");
    throw error;
  }
}

/** web_fetch's settings: `web`, with the hosts sandboxed commands may reach allowed too (docs/security.md). */
function webSettings(config: ResolvedConfig): WebSettings {
  return {
    allowedDomains: [...(config.web?.allowedDomains ?? []), ...(config.sandbox?.network?.allowedDomains ?? [])],
    deniedDomains: config.web?.deniedDomains ?? [],
    ...(config.web?.timeoutMs ? { timeoutMs: config.web.timeoutMs } : {}),
  };
}
