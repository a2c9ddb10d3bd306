import { statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { UnknownSessionError, type SessionMeta, type SessionStore } from "../../storage/store.js";
import type { EngineSetup } from "../agent/engine.js";
import { createCompactionPolicy, type CompactionSettings } from "../agent/compaction.js";
import { createMaxStepsPolicy } from "../agent/max-steps.js";
import type { TurnPolicy } from "../agent/policy.js";
import { createStructuredOutput } from "../agent/structured-output.js";
import { buildSystemPrompt } from "../agent/system-prompt.js";
import { createFileGuard } from "../permissions/file-guard.js";
import { BUILTIN_PROVIDERS, modelInfo, parseModelRef } from "../providers/registry.js";
import type { Tool } from "../tools/tool.js";
import { createTools, toolEnv } from "../tools/index.js";
import { createFileRestorer } from "../tools/restore-file.js";
import { findWorkspace } from "../tools/workspace.js";
import type { PermissionMode } from "../../protocol/commands.js";
import type { Redactor } from "../permissions/redact.js";
import type { CassetteSetup } from "./cassette-setup.js";
import { limitsFor, loadConfig, type KeenPaths, type ResolvedConfig, type SandboxMode } from "./config.js";
import { chooseSandbox } from "./sandbox-setup.js";
import { secretsRedactor } from "./secrets.js";
import { UsageError } from "./errors.js";
import type { LoadedSchema } from "./output-schema.js";
import { chooseModel, createProvider } from "./provider-setup.js";
import { chooseRunner, cliSetup, type Runner } from "./cli-runner-setup.js";
import { selectToolNames } from "./run-flags.js";

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
  /** `--runner`, else the runner of the stored session the front end starts in. */
  runner?: Runner;
  /** The runner of the stored session the front end starts in (`--runner` and it beat the config). */
  storedRunner?: Runner;
  /** `--sandbox` */
  sandbox?: SandboxMode;
}

/** A session's setup and the config it came from (front ends read e.g. `stdinGraceMs`). */
export interface PreparedSetup extends EngineSetup {
  config: ResolvedConfig;
  redactor: Redactor;
}

/**
 * Builds what a session needs (provider, tools, system prompt, per-turn
 * policies) for the engine, from config, flags and the session's directory.
 * Each result is kept for its (session, cwd, model), so a front end may call
 * it first to turn every usage error into exit 2 before a session exists,
 * and the engine's own call reuses the result.
 */
export function createPreparer(paths: KeenPaths, settings: FrontEndSettings, env: NodeJS.ProcessEnv = process.env) {
  let last: { key: string; value: Promise<PreparedSetup> } | undefined;
  return (session: { id: string; cwd: string; model?: string }): Promise<PreparedSetup> => {
    const key = `${session.id}\0${session.cwd}\0${session.model ?? ""}`;
    if (last?.key !== key) last = { key, value: prepare(paths, settings, env, session) };
    return last.value;
  };
}

async function prepare(
  paths: KeenPaths, settings: FrontEndSettings, env: NodeJS.ProcessEnv, session: { id: string; cwd: string; model?: string },
): Promise<PreparedSetup> {
  const cwd = resolve(session.cwd);
  if (!isDirectory(cwd)) throw new UsageError(`working directory ${cwd} does not exist`);
  const workspace = findWorkspace(cwd);
  const config = loadConfig(paths, workspace);
  const replay = settings.cassette?.replay;
  if (!replay && chooseRunner(settings.runner, settings.storedRunner, config) === "cli") return prepareCli(config, settings, env, session);
  const choice = replay ? replay.choose(session.model, config) : chooseModel(session.model, config, env);
  // Keen's config directory (holding the config file) and data directory are off limits to its tools.
  const guard = createFileGuard({
    workspace, protectedPaths: [dirname(paths.configFile), paths.dataDir], allowProjectConfigEdits: config.guard?.allowProjectConfigEdits,
  });
  // Hides known secrets from the model (tool output) and from every output (the engine redacts events with it).
  const redactor = secretsRedactor(env, config.providers);
  const { sandbox, fallback } = chooseSandbox(config, settings.sandbox, env, {
    workspace, protectedPaths: [dirname(paths.configFile), paths.dataDir], allowProjectConfigEdits: config.guard?.allowProjectConfigEdits,
  });
  const allTools = createTools({ cwd, workspace, guard, env: toolEnv(env), redactor, sandbox });
  const limits = limitsFor(
    config,
    { allowedTools: settings.allowedTools, disallowedTools: settings.disallowedTools, maxTurns: settings.maxTurns, permissionMode: settings.permissionMode },
    settings.defaultMode,
  );
  const names = selectToolNames(allTools.map((t) => t.definition.name), limits.allowedTools, limits.disallowedTools);
  const tools = allTools.filter((t) => names.includes(t.definition.name));
  const schema = settings.outputSchema;
  const maxTurns = limits.maxTurns;
  const provider = await createProvider(choice, session.id, undefined, settings.cassette?.fetchFor(session.id, choice, redactor));
  const instructions = schema ? createStructuredOutput(schema.schema, schema.check).instructions : undefined;
  const info = modelInfo(choice.preset, choice.model);
  const compaction: CompactionSettings = {
    window: info.contextWindow,
    threshold: config.compaction?.threshold ?? 0.8,
    keepTokens: config.compaction?.keepTokens ?? Math.min(20_000, Math.floor(info.contextWindow / 5)),
    reserveTokens: Math.min(info.maxOutputTokens, 8_192, Math.floor(info.contextWindow / 4)),
  };
  return {
    ...createFileRestorer(guard),
    config,
    redactor,
    retry: config.retry,
    permissionMode: limits.permissionMode ?? settings.defaultMode,
    projectMode: config.projectLimits.permissionMode,
    sandbox: { sandboxed: Boolean(sandbox), fallback, bashConfined: Boolean(sandbox) && config.sandbox?.acceptEditsRunsBash !== false },
    modelRef: `${choice.providerId}/${choice.model}`,
    provider,
    tools,
    system: buildSystemPrompt({ cwd, workspace, toolNames: names, extra: instructions }),
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
function prepareCli(config: ResolvedConfig, settings: FrontEndSettings, env: NodeJS.ProcessEnv, session: { model?: string }): PreparedSetup {
  const limits = limitsFor(
    config,
    { allowedTools: settings.allowedTools, disallowedTools: settings.disallowedTools, maxTurns: settings.maxTurns, permissionMode: settings.permissionMode },
    settings.defaultMode,
  );
  const permissionMode = limits.permissionMode ?? settings.defaultMode;
  if (settings.outputSchema) throw new UsageError("--output-schema is not supported with the CLI runner yet");
  const cli = cliSetup(config, {
    model: session.model, mode: permissionMode, maxTurns: limits.maxTurns, allowedTools: limits.allowedTools, disallowedTools: limits.disallowedTools, env,
  });
  return {
    config, redactor: secretsRedactor(env, config.providers), retry: config.retry, permissionMode, projectMode: config.projectLimits.permissionMode,
    modelRef: cli.modelRef, provider: cli.provider, tools: [], system: "", contextWindow: cli.contextWindow, backend: cli.backend,
    perTurn: () => ({ policies: [], tools: [] }),
  };
}

/** Checks a `set-model` reference against config and keys; throws UsageError naming what to set. */
export function checkModel(paths: KeenPaths, cwd: string, ref: string, env: NodeJS.ProcessEnv = process.env, cassette?: CassetteSetup): string {
  const config = loadConfig(paths, findWorkspace(cwd));
  const choice = cassette?.replay ? cassette.replay.choose(ref, config) : chooseModel(ref, config, env);
  return `${choice.providerId}/${choice.model}`;
}

/** The models of configured providers, for `list-models`: whether each provider's key is set. */
export function listModels(config: ResolvedConfig | undefined, current: string | undefined, env: NodeJS.ProcessEnv = process.env) {
  const providers = config?.providers ?? BUILTIN_PROVIDERS;
  const out: { model: string; provider: string; available: boolean; current: boolean }[] = [];
  for (const [id, preset] of Object.entries(providers)) {
    const available = preset.keyOptional || Boolean(preset.apiKeyEnv && env[preset.apiKeyEnv]);
    const names = new Set([preset.defaultModel, ...Object.keys(preset.models)]);
    for (const name of names) {
      const model = `${id}/${name}`;
      out.push({ model, provider: id, available: Boolean(available), current: model === current });
    }
  }
  const currentProvider = current ? parseModelRef(current).provider : undefined;
  return out.sort((a, b) => Number(b.provider === currentProvider) - Number(a.provider === currentProvider));
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

/** `keen run`/`keen stdio`'s choice: `--continue` (in `--cwd`, else the current directory), else `--session`. */
export function runSessionChoice(settings: { continueLast?: boolean; session?: string; cwd?: string }): SessionChoice {
  return settings.continueLast ? { continueIn: resolve(settings.cwd ?? process.cwd()) } : { id: settings.session };
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
    if (error instanceof UnknownSessionError) throw new UsageError(error.message);
    throw error;
  }
}
