import { resolve } from "node:path";
import { EventBus } from "../../protocol/bus.js";
import type { PermissionMode } from "../../protocol/commands.js";
import { errorCodeOf } from "../../protocol/errors.js";
import { newSessionId } from "../../storage/ids.js";
import { openStore } from "../../storage/level-store.js";
import type { SessionMeta, SessionStore } from "../../storage/store.js";
import { createSessionEngine, type SessionEngine } from "../agent/engine.js";
import { DEFAULT_RETRY } from "../agent/retry.js";
import type { McpServerConfig } from "../mcp/config.js";
import type { FileAccess } from "../tools/tool.js";
import { findWorkspace } from "../tools/workspace.js";
import type { CassetteSetup } from "./cassette-setup.js";
import { storedRunner } from "./cli-runner-setup.js";
import { keenPaths, loadConfig, type KeenPaths, type ResolvedConfig } from "./config.js";
import { checkModel, createPreparer, listModels, storedSession, type PreparedSetup } from "./engine-setup.js";
import { loadOutputSchema } from "./output-schema.js";
import type { SessionSettings } from "./session-flags.js";

/**
 * The one session host: every front end (the TUI, keen run, keen stdio,
 * keen acp, keen sessions compact) opens its store, cassette, preparer, bus
 * and session engine here, and keeps only its own input and output.
 *
 * What differs between front ends is this table, and nothing else:
 *
 * | front end | headless | asks | mode when unset | replay's mode | set-permission-mode ceiling | no provider |
 * | --------- | -------- | ---- | --------------- | ------------- | --------------------------- | ----------- |
 * | run       | yes      | no   | auto            | read-only     | none (no client)             | exit 2      |
 * | stdio     | yes      | yes  | ask             | ask           | flag, else user config       | exit 2      |
 * | tui       | no       | yes  | ask             | ask           | none (the user at the keys)  | opens, says what to set |
 * | acp       | no       | yes  | ask             | (no cassette) | none (the user in the editor) | the request fails |
 * | compact   | yes      | no   | read-only       | (no cassette) | none                         | exit 2      |
 *
 * Decisions where the five copies this replaces differed:
 * - a replay's mode is the flag, else the cassette's (the demo: auto), else
 *   read-only where nobody can answer a permission request (run), else ask;
 * - the demo's workspace is announced on stderr by every front end (only
 *   keen run did); the TUI's note shows before the screen opens;
 * - `set-model` is checked the same way everywhere, with the cassette's models
 *   when replaying (keen run refused it with a fake check; it sends no such
 *   command, but `list-models` now names its current model as the others do);
 * - a failing output is one line `keen: an output failed: …` everywhere (the
 *   TUI said "a subscriber failed"; keen acp keeps its `keen acp:` prefix).
 */
export type FrontEnd = "run" | "stdio" | "tui" | "acp" | "compact";

interface Profile {
  headless: boolean;
  interactive: boolean;
  defaultMode: PermissionMode;
  replayMode?: PermissionMode;
  ceiling: boolean;
  mcp: boolean;
  /** Setup news (MCP servers starting or failing) shows as soon as the front end listens, not with the first turn: a screen is up before any prompt. */
  earlyNews: boolean;
}

const PROFILES: Record<FrontEnd, Profile> = {
  run: { headless: true, interactive: false, defaultMode: "auto", replayMode: "read-only", ceiling: false, mcp: true, earlyNews: false },
  stdio: { headless: true, interactive: true, defaultMode: "ask", replayMode: "ask", ceiling: true, mcp: true, earlyNews: false },
  tui: { headless: false, interactive: true, defaultMode: "ask", replayMode: "ask", ceiling: false, mcp: true, earlyNews: true },
  acp: { headless: false, interactive: true, defaultMode: "ask", ceiling: false, mcp: true, earlyNews: false },
  compact: { headless: true, interactive: false, defaultMode: "read-only", ceiling: false, mcp: false, earlyNews: false },
};

/** What a front end's flags say about every session it opens. */
export interface HostSettings extends SessionSettings {
  /** `--cwd`: the directory of new sessions (and of stored ones, where the front end lets it override theirs). */
  cwd?: string;
  /** `--output-schema <file>` */
  outputSchema?: string;
  /** `--timeout` where it bounds each turn (keen stdio). */
  turnTimeoutMs?: number;
  /** When the front end started: the first turn's `duration_ms` counts from here (keen run). */
  startedAt?: number;
  /** A line for a person about the host's own failures; default `keen: …` on stderr. */
  log?: (line: string) => void;
  /** Replaces the early connection to the provider (FrontEndSettings.preconnect): keen run defers it until its prompt is known. */
  preconnect?: (baseURL: string, env: NodeJS.ProcessEnv) => boolean | void;
}

/** Which stored session a front end starts in: `--session`/`--resume` (an id or prefix) or `--continue`. */
export interface StartChoice {
  session?: string;
  continue?: boolean;
  /** How to start a first session, for the error when `--continue` finds none. */
  start?: string;
}

/** A session engine the host opened, with what its setup said. */
export interface HostSession<Setup extends PreparedSetup | undefined = PreparedSetup> {
  engine: SessionEngine;
  /** The session's id (stored or fresh). */
  id: string;
  cwd: string;
  /** The session's setup; undefined only when opened `"without-provider"` and none is configured (the TUI). */
  setup: Setup;
  /** Why there is no setup (no provider configured). */
  problem?: string;
  /** The config of the session's workspace. */
  config: ResolvedConfig;
  /** The mode the session starts in. */
  permissionMode: PermissionMode;
  /** Ends the engine once every command sent is answered, and what its setup started (MCP servers). */
  close(): Promise<void>;
}

/** The host of one process. */
export interface Host {
  paths: KeenPaths;
  store: SessionStore;
  cassette?: CassetteSetup;
  /** The stored session chosen (if any) and the directory to start in: `--cwd`, else the session's, else the demo's, else here. */
  start(choice: StartChoice): Promise<{ meta?: SessionMeta; cwd: string }>;
  /** Prepares a session (usage errors throw before anything is stored) and opens its engine. */
  open(request: OpenRequest): Promise<HostSession>;
  /** The same, except that no provider configured is no error: the session opens and `problem` says what to set. */
  open(request: OpenRequest, allow: "without-provider"): Promise<HostSession<PreparedSetup | undefined>>;
}

/** The session to open: a stored one (`meta`) or a fresh one in `cwd`. */
export interface OpenRequest {
  meta?: SessionMeta;
  cwd: string;
  /** An ACP client's editor as the file tools' storage, for the session's id. */
  files?: (sessionId: string) => FileAccess | undefined;
  /** Servers an ACP client gave for this session. */
  mcpServers?: Record<string, McpServerConfig>;
}

/** Opens the store and the cassette for a front end. Throws UsageError for a bad cassette. */
export async function openHost(frontEnd: FrontEnd, settings: HostSettings): Promise<Host> {
  const profile = PROFILES[frontEnd];
  const log = settings.log ?? ((line: string) => void process.stderr.write(`keen: ${line}\n`));
  const paths = keenPaths();
  // Loaded only with --record/--replay: a plain run, and the start-up snapshot, never carry the cassette machinery.
  const cassette = settings.cassette ? (await import("./cassette-setup.js")).openCassette(settings.cassette, paths) : undefined;
  const replay = cassette?.replay;
  const store = openStore(paths.dataDir);
  const outputSchema = settings.outputSchema ? await loadOutputSchema(resolve(settings.outputSchema)) : undefined;
  const replayMode = replay ? (replay.mode ?? profile.replayMode) : undefined;

  async function start(choice: StartChoice): Promise<{ meta?: SessionMeta; cwd: string }> {
    const here = resolve(settings.cwd ?? process.cwd());
    const meta = await storedSession(store, choice.continue ? { continueIn: here, start: choice.start } : { id: choice.session });
    const demo = (settings.cwd ?? meta?.cwd) ? undefined : replay?.demoWorkspace?.();
    if (demo) log(`replaying the demo in ${demo}`);
    return { meta, cwd: resolve(settings.cwd ?? meta?.cwd ?? demo ?? here) };
  }

  async function open(request: OpenRequest, allow?: "without-provider"): Promise<HostSession<PreparedSetup | undefined>> {
    const { meta, cwd } = request;
    const id = meta?.id ?? newSessionId();
    // A replay's tools really run on this workspace: its mode, never the config's; the flag still only narrows to a project's.
    const prepareSetup = createPreparer(paths, {
      allowedTools: settings.allowedTools, disallowedTools: settings.disallowedTools, maxTurns: settings.maxTurns, outputSchema,
      headless: profile.headless, permissionMode: settings.permissionMode ?? replayMode, defaultMode: profile.defaultMode, cassette,
      runner: settings.runner, runnerOf: (id) => storedRunner(store, id), mcpConfig: settings.mcpConfig, sandbox: settings.sandbox,
      mcp: profile.mcp, files: request.files?.(id), mcpServers: request.mcpServers, preconnect: settings.preconnect,
    });
    // The engine keeps the one cache of setups; the host only notes the last one built, for its config.
    let prepared: PreparedSetup | undefined;
    const prepare = async (session: { id: string; cwd: string; model?: string }) => (prepared = await prepareSetup(session));
    let config: ResolvedConfig | undefined;
    const bus = new EventBus((error) => log(`an output failed: ${String(error)}`));
    const engine = createSessionEngine({
      store, bus, headless: profile.headless, interactive: profile.interactive, cwd,
      permissionMode: settings.permissionMode ?? replayMode ?? profile.defaultMode,
      modeCeiling: profile.ceiling ? () => ceiling(settings.permissionMode, replay ? undefined : config?.userLimits.permissionMode, paths) : undefined,
      prepare, checkModel: (ref) => checkModel(paths, cwd, ref, process.env, cassette),
      listModels: () => listModels(prepared?.config ?? config), retry: DEFAULT_RETRY, turnTimeoutMs: settings.turnTimeoutMs, newId: newSessionId,
      initial: { id, meta, cwd, model: settings.model }, startedAt: settings.startedAt,
      earlyNews: profile.earlyNews,
    });
    let problem: string | undefined;
    try {
      await engine.prepare();
    } catch (error) {
      if (allow !== "without-provider" || errorCodeOf(error, "failed") !== "no_provider") {
        await engine.close();
        throw error;
      }
      problem = (error as Error).message;
    }
    const setup = problem ? undefined : prepared;
    config = setup?.config ?? loadConfig(paths, findWorkspace(cwd));
    const permissionMode = setup?.permissionMode ?? settings.permissionMode ?? replayMode ?? profile.defaultMode;
    // close: the engine ends once every command sent is answered, and with it what its setup started (MCP servers);
    // then the store closes the session's database it keeps open for a moment after each write (storage/level-db.ts).
    const close = async () => {
      await engine.close();
      await store.close();
    };
    return { engine, id, cwd, setup, problem, config, permissionMode, close };
  }

  return { paths, store, cassette, start, open: open as Host["open"] };
}

/** The widest mode a client of keen stdio may set: the one the user started it with (flag, else user config); a replay's own mode is only a default. */
function ceiling(flag: PermissionMode | undefined, user: PermissionMode | undefined, paths: KeenPaths) {
  if (flag) return { mode: flag, source: "--permission-mode" };
  return user ? { mode: user, source: `permissionMode in ${paths.configFile}` } : undefined;
}
