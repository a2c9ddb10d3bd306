import { resolve } from "node:path";
import { EventBus } from "../../protocol/bus.js";
import type { KeenEvent } from "../../protocol/events.js";
import { PermissionModeSchema, type PermissionMode } from "../../protocol/commands.js";
import { errorCodeOf } from "../../protocol/responses.js";
import { newSessionId } from "../../storage/ids.js";
import { openStore } from "../../storage/level-store.js";
import type { SessionMeta } from "../../storage/store.js";
import { createSessionEngine } from "../agent/engine.js";
import { DEFAULT_RETRY } from "../agent/retry.js";
import { ttyProblem } from "../tui/terminal.js";
import { historyPathFor } from "../tui/history.js";
import { uiPrefsPathFor } from "../tui/ui-prefs.js";
import { cassetteSettings, type CassetteFlags } from "./cassette-flags.js";
import { keenPaths, loadConfig } from "./config.js";
import { checkModel, createPreparer, listModels, storedSession, type PreparedSetup } from "./engine-setup.js";
import { storedRunner } from "./cli-runner-setup.js";
import { UsageError } from "./errors.js";
import { parseRunner, parseSandboxFlag } from "./run-flags.js";
import { askMcpTrustOnce } from "./mcp-ask.js";
import { findWorkspace } from "../tools/workspace.js";

/** `keen [--resume <id> | --continue] [--model m] [--permission-mode m] [--theme t] [--cwd dir]` */
export interface TuiFlags extends CassetteFlags {
  resume?: string;
  continue?: boolean;
  model?: string;
  permissionMode?: string;
  theme?: string;
  cwd?: string;
  mcpConfig?: string[];
  runner?: string;
  sandbox?: string;
}

const EXIT_FOR_SIGNAL: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

/**
 * `keen` with no command: the full-screen TUI, a client of an in-process
 * session engine (interactive turns, `ask` by default). Refuses without a
 * terminal (exit 2, pointing to `keen run`). A missing provider does not stop
 * it: the TUI opens and says what to set.
 */
export async function tuiCommand(flags: TuiFlags): Promise<number> {
  const runner = flags.runner === undefined ? undefined : parseRunner(flags.runner);
  const problem = ttyProblem(process.stdin, process.stdout);
  if (problem) throw new UsageError(problem);
  if (flags.resume && flags.continue) throw new UsageError("use --resume <id> or --continue, not both");
  const mode = flags.permissionMode === undefined ? undefined : PermissionModeSchema.safeParse(flags.permissionMode);
  if (mode && !mode.success) throw new UsageError(`--permission-mode must be one of ${PermissionModeSchema.options.join(", ")}, not "${flags.permissionMode}"`);

  const paths = keenPaths();
  const cassetteFlags = cassetteSettings(flags);
  const cassette = cassetteFlags ? (await import("./cassette-setup.js")).openCassette(cassetteFlags, paths) : undefined;
  const store = openStore(paths.dataDir);
  const here = resolve(flags.cwd ?? process.cwd());
  const meta = await sessionToOpen(store, flags, here);
  // As with keen run --session: the session's directory unless --cwd says otherwise.
  const cwd = flags.cwd ? here : (meta?.cwd ?? cassette?.replay?.demoWorkspace?.() ?? here);
  const workspace = findWorkspace(cwd);
  let config = loadConfig(paths, workspace);
  // An untrusted .mcp.json is asked about once, before the screen opens; the answer is in the config from then on.
  if (await askMcpTrustOnce(paths, config, workspace, process.stdin, process.stderr)) config = loadConfig(paths, workspace);
  // Replaying, as in keen run and stdio: the flag, else the replay's mode (the demo: auto), never the config's.
  const replayMode = cassette?.replay ? (cassette.replay.mode ?? "ask") : undefined;
  const prepare = createPreparer(paths, {
    headless: false, permissionMode: mode?.data ?? replayMode, defaultMode: "ask", cassette, runner, runnerOf: (id) => storedRunner(store, id),
    mcpConfig: flags.mcpConfig, sandbox: parseSandboxFlag(flags.sandbox),
  });
  const id = meta?.id ?? newSessionId();
  const model = flags.model ?? meta?.model;
  let setup: PreparedSetup | undefined;
  let providerProblem: string | undefined;
  try {
    setup = await prepare({ id, cwd, model });
  } catch (error) {
    if (errorCodeOf(error, "failed") !== "no_provider") throw error;
    providerProblem = (error as Error).message;
  }

  const bus = new EventBus((error) => process.stderr.write(`keen: a subscriber failed: ${String(error)}\n`));
  const permissionMode: PermissionMode = setup?.permissionMode ?? mode?.data ?? replayMode ?? "ask";
  const engine = createSessionEngine({
    store, bus, headless: false, cwd, permissionMode, interactive: true, redactor: setup?.redactor,
    prepare, checkModel: (ref) => checkModel(paths, cwd, ref, process.env, cassette),
    listModels: () => listModels(setup?.config ?? config),
    retry: DEFAULT_RETRY, newId: newSessionId, initial: { id, meta, cwd, model },
  });

  const { startTui } = await import("../tui/start.js");
  let signal: NodeJS.Signals | undefined;
  const started = startTui({
    client: showMcpEarly(engine, bus, setup, id), stdin: process.stdin, stdout: process.stdout, theme: flags.theme ?? config.theme,
    initial: { cwd, model: setup?.modelRef ?? model ?? config.model ?? "no model", sessionId: meta?.id, permissionMode, resume: Boolean(meta), problem: providerProblem,
      unconfined: Boolean(setup?.sandbox?.fallback),
      // A replay starts with its recorded prompt typed in, ready to send.
      draft: meta ? undefined : cassette?.replay?.prompt },
    historyFile: historyPathFor(paths.dataDir, cwd),
    uiPrefsFile: uiPrefsPathFor(paths.dataDir),
    settings: config.tui,
    transcriptMarkdown: async (sessionId) => {
      const { transcriptMarkdown } = await import("./sessions.js");
      return transcriptMarkdown(await store.resolve(sessionId), await store.load(sessionId));
    },
    onExit: (exit) => {
      signal = exit.signal;
      if (signal) engine.stop(signal === "SIGINT" ? "sigint" : signal === "SIGHUP" ? "sighup" : "sigterm");
    },
  });
  try {
    await started;
  } catch (error) {
    // The theme is loaded before the screen opens: a bad one is the user's input, not Keen's failure.
    if ((error as Error | undefined)?.name !== "ThemeError") throw error;
    await engine.close().then(() => prepare.close());
    throw new UsageError(`${flags.theme ? "--theme" : "theme in the config"}: ${(error as Error).message}`);
  }
  // The engine stores what the last turn produced before the process ends; bounded, a hung tool must not keep it alive.
  await Promise.race([engine.close().then(() => prepare.close()), new Promise((r) => setTimeout(r, 5000).unref())]);
  return signal ? (EXIT_FOR_SIGNAL[signal] ?? 1) : 0;
}

/**
 * The engine as the TUI's client, except that once the TUI subscribes, the
 * session's MCP news (servers that failed, a `.mcp.json` to trust) reaches it
 * at once instead of with the first turn; the engine takes them over then.
 */
function showMcpEarly(engine: ReturnType<typeof createSessionEngine>, bus: EventBus, setup: PreparedSetup | undefined, id: string) {
  if (!setup?.attach) return engine;
  const attach = setup.attach;
  return new Proxy(engine, {
    get(target, key, receiver) {
      if (key !== "subscribe") return Reflect.get(target, key, receiver);
      return (listener: Parameters<typeof engine.subscribe>[0]) => {
        const off = target.subscribe(listener);
        attach(async (draft) => bus.emit(setup.redactor.redactDeep({ ...draft, conversation_id: id, ts: Date.now() } as KeenEvent)));
        return off;
      };
    },
  });
}

async function sessionToOpen(store: ReturnType<typeof openStore>, flags: TuiFlags, cwd: string): Promise<SessionMeta | undefined> {
  return storedSession(store, flags.continue ? { continueIn: cwd, start: "`keen`" } : { id: flags.resume });
}
