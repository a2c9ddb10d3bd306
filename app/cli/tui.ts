import { findWorkspace } from "../tools/workspace.js";
import { ttyProblem } from "../tui/terminal.js";
import { historyPathFor } from "../tui/history.js";
import { uiPrefsPathFor } from "../tui/ui-prefs.js";
import { loadConfig } from "./config.js";
import { UsageError } from "./errors.js";
import { openHost } from "./host.js";
import { deferredPreconnect } from "../providers/preconnect.js";
import { askMcpTrustOnce } from "./mcp-ask.js";
import { askHooksTrustOnce } from "./hooks-ask.js";
import { validateSessionFlags, type SessionFlags } from "./session-flags.js";
import { exitCodeForSignal } from "./signals.js";

/** `keen [--resume <id> | --continue] [session flags] [--theme t] [--cwd dir]` */
export interface TuiFlags extends SessionFlags {
  resume?: string;
  continue?: boolean;
  theme?: string;
  cwd?: string;
}

/**
 * `keen` with no command: the full-screen TUI, a client of an in-process
 * session engine (interactive turns, `ask` by default). Refuses without a
 * terminal (exit 2, pointing to `keen run`). A missing provider does not stop
 * it: the TUI opens and says what to set. The TUI handles its own signals
 * (the terminal is in raw mode: Ctrl-C is a key) and says which one ended it.
 */
export async function tuiCommand(flags: TuiFlags): Promise<number> {
  // A bad flag is named first, terminal or not.
  const settings = validateSessionFlags(flags);
  if (flags.resume && flags.continue) throw new UsageError("use --resume <id> or --continue, not both");
  const problem = ttyProblem(process.stdin, process.stdout);
  if (problem) throw new UsageError(problem);
  // The provider's early connection waits for the first frame: its TLS, net and dns modules were ~8 ms of it,
  // and a prompt is seconds of typing away, ample for the handshake (app/providers/preconnect.ts).
  const deferred = deferredPreconnect();
  const host = await openHost("tui", { ...settings, cwd: flags.cwd, preconnect: deferred.preconnect });
  const { meta, cwd } = await host.start({ session: flags.resume, continue: flags.continue, start: "`keen`" });
  // An untrusted .mcp.json is asked about once, before the screen opens; the answer is in the config from then on.
  const workspace = findWorkspace(cwd);
  await askMcpTrustOnce(host.paths, loadConfig(host.paths, workspace), workspace, process.stdin, process.stderr);
  await askHooksTrustOnce(host.paths, loadConfig(host.paths, workspace), workspace, process.stdin, process.stderr);
  const session = await host.open({ meta, cwd }, "without-provider");
  const { engine, setup, config } = session;

  const { startTui } = await import("../tui/start.js");
  let signal: NodeJS.Signals | undefined;
  const started = startTui({
    client: engine, stdin: process.stdin, stdout: process.stdout, theme: flags.theme ?? config.theme,
    initial: {
      cwd, model: setup?.modelRef ?? settings.model ?? meta?.model ?? config.model ?? "no model", sessionId: meta?.id,
      permissionMode: session.permissionMode, resume: Boolean(meta), problem: session.problem, unconfined: Boolean(setup?.sandbox?.fallback),
      // A replay starts with its recorded prompt typed in, ready to send.
      draft: meta ? undefined : host.cassette?.replay?.prompt,
    },
    historyFile: historyPathFor(host.paths.dataDir, cwd),
    uiPrefsFile: uiPrefsPathFor(host.paths.dataDir),
    settings: config.tui,
    afterFirstFrame: deferred.release,
    transcriptMarkdown: async (sessionId) => {
      const { transcriptMarkdown } = await import("./sessions.js");
      return transcriptMarkdown(await host.store.resolve(sessionId), await host.store.load(sessionId));
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
    await session.close();
    throw new UsageError(`${flags.theme ? "--theme" : "theme in the config"}: ${(error as Error).message}`);
  }
  // The engine stores what the last turn produced before the process ends; bounded, a hung tool must not keep it alive.
  await Promise.race([session.close(), new Promise((r) => setTimeout(r, 5000).unref())]);
  return exitCodeForSignal(signal);
}
