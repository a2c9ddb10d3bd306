import { PassThrough } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type { EngineClient } from "../../protocol/client.js";
import type { PermissionMode } from "../../protocol/commands.js";
import type { KeenEvent } from "../../protocol/events.js";
import { loadTheme, type Theme } from "../../themes/index.js";
import { TuiController } from "./controller.js";
import type { Frame } from "./frame.js";
import { appendHistory, loadHistory } from "./history.js";
import { handleInput } from "./input-actions.js";
import { ESC_WAIT_MS, KeyDecoder, type InputEvent } from "./keys.js";
import { loadMarkdown } from "./markdown.js";
import { createBlessedSurface, type Surface } from "./screen.js";
import { loadBlessed } from "./blessed-core.js";
import { osc52, runEditor, TerminalModes } from "./terminal.js";
import { Notifier, type NotifyWhen, type NotifyWith } from "./notify.js";
import { loadUiPrefs, saveUiPrefs } from "./ui-prefs.js";

export { ttyProblem } from "./terminal.js";

/** How the TUI ended: the user left, or a signal (the CLI exits 128 + signal number). */
export interface TuiExit {
  sessionId?: string;
  reason: "user" | "signal";
  signal?: NodeJS.Signals;
}

/** What `keen` (no arguments), `keen --resume` and `keen --continue` pass to the TUI. */
export interface StartTuiOptions {
  client: EngineClient;
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  /** A built-in theme name, a theme file, or a Theme; NO_COLOR in `env` makes it monochrome. */
  theme?: string | Theme;
  env?: NodeJS.ProcessEnv;
  initial: {
    cwd: string;
    model: string;
    sessionId?: string;
    /** bash runs unconfined (auto found no sandbox): the status bar says so. */
    unconfined?: boolean;
    permissionMode: PermissionMode;
    /** Replay the stored session `sessionId` (keen --resume / --continue). */
    resume?: boolean;
    /** Why no provider could be set up (shown with what to set). */
    problem?: string;
    /** Text already typed in the prompt (a replay's recorded prompt). */
    draft?: string;
  };
  /** The workspace's prompt history file (see history.ts `historyPathFor`). */
  historyFile?: string;
  /** Called once the terminal is restored, before the promise resolves. */
  onExit?: (exit: TuiExit) => void | Promise<void>;
  /** Off in tests that run several TUIs in one process. */
  handleSignals?: boolean;
  /** Measurement hook (npm run bench): milliseconds each frame took to compose and hand to the terminal. */
  onFrame?: (ms: number) => void;
  /** The clock timers and "ago"s are shown against (tests fix it, so a loaded machine cannot age a screen). */
  now?: () => number;
  /** The file that remembers the side panes shown (ui-prefs.ts `uiPrefsPathFor`). */
  uiPrefsFile?: string;
  /** The config's `tui` settings: mouse capture at start, notifications. */
  settings?: { mouse?: boolean; notify?: NotifyWhen; notifyWith?: NotifyWith };
  /** `/export`: the stored transcript of a session as markdown (the text `keen sessions show` prints). */
  transcriptMarkdown?: (sessionId: string) => Promise<string>;
  /** Ctrl-Z: stops the process (default SIGTSTP to its process group, as the terminal's own Ctrl-Z would); tests replace it. */
  stopProcess?: () => void;
  /** Called once the first frame has been written: work the screen need not wait for (the provider's early connection). */
  afterFirstFrame?: () => void;
}

/** About 30 frames per second at most while output streams. */
export const FRAME_MS = 33;
/** A keystroke may be drawn sooner than the streaming cadence, so typing never waits a whole frame. */
const KEY_FRAME_MS = 12;
const TICK_MS = 100;
const SHUTDOWN_WAIT_MS = 3000;

/**
 * Runs the full-screen TUI until the user leaves; resolves with the session
 * id (undefined when no session was created). Needs TTYs (check
 * `ttyProblem` first). Loads blessed and the markdown libraries here, never
 * at start-up of other commands. Contract: the terminal is restored (raw
 * mode, alternate screen, mouse and paste modes) on every way out, including
 * SIGHUP, SIGTERM and a closed terminal; the resume command is printed after.
 */
export async function startTui(options: StartTuiOptions): Promise<string | undefined> {
  const env = options.env ?? process.env;
  const { stdin, stdout, client } = options;
  const theme = typeof options.theme === "object" ? options.theme : loadTheme(options.theme, env);
  const blessed = await loadBlessed();
  const settings = options.settings ?? {};
  const modes = new TerminalModes(stdin, stdout, settings.mouse !== false);
  const notifier = new Notifier({ when: settings.notify, with: settings.notifyWith }, (bytes) => stdout.write(bytes), Boolean(env.TMUX));
  const prefs = loadUiPrefs(options.uiPrefsFile);
  let suspended = false;
  let surface: Surface | undefined;
  let lastFrame: Frame | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastDraw = 0;
  let finishing: Promise<string | undefined> | undefined;
  let resolveDone!: (id: string | undefined) => void;
  const done = new Promise<string | undefined>((resolve) => (resolveDone = resolve));

  const draw = () => {
    timer = undefined;
    if (!surface || finishing || suspended) return;
    const started = performance.now();
    lastDraw = Date.now();
    try {
      const { cols, rows } = surface.size();
      lastFrame = controller.frame(cols, rows);
      surface.draw(lastFrame);
    } catch (error) {
      // A drawing bug must not take the terminal (and the session) down: say it once and keep going.
      reportOnce(`display error: ${String((error as Error)?.stack ?? error)}`);
    }
    options.onFrame?.(performance.now() - started);
  };
  const reported = new Set<string>();
  const reportOnce = (message: string) => {
    if (reported.has(message)) return;
    reported.add(message);
    controller.notice(message.split("\n").slice(0, 3).join(" "), "error");
  };
  let timerDue = 0;
  const requestFrame = (urgent?: boolean) => {
    if (finishing) return;
    const due = lastDraw + (urgent ? KEY_FRAME_MS : FRAME_MS);
    if (timer && timerDue <= due) return;
    if (timer) clearTimeout(timer);
    timerDue = due;
    timer = setTimeout(draw, Math.max(0, due - Date.now()));
  };

  const controller: TuiController = new TuiController({
    client, theme, initial: options.initial, now: options.now,
    history: loadHistory(options.historyFile),
    saveHistory: (prompt) => appendHistory(options.historyFile, prompt),
    copy: (text) => stdout.write(osc52(text)),
    editExternal: async (text) => {
      surface?.leave();
      modes.disable();
      stdin.off("data", onData);
      try {
        return await runEditor(text, env);
      } finally {
        stdin.on("data", onData);
        modes.enable();
        surface?.enter();
      }
    },
    themeFor: (name) => loadTheme(name, env),
    requestFrame,
    redraw: () => {
      surface?.invalidate();
      requestFrame();
    },
    exit: () => void finish({ reason: "user" }),
    savePanes: (panes) => void saveUiPrefs(options.uiPrefsFile, { ...prefs, panes }),
    toggleMouse: () => {
      modes.setMouse(!modes.mouse);
      return modes.mouse;
    },
    suspend: () => suspend(),
    transcriptMarkdown: options.transcriptMarkdown,
  });
  controller.ui.panes = { ...prefs.panes };

  // Ctrl-Z in raw mode is a key, not a signal: Keen gives the terminal back, then stops itself as the
  // terminal would have; SIGCONT (`fg`) takes the terminal again and repaints every cell.
  const onContinue = () => {
    if (!suspended || finishing) return;
    suspended = false;
    stdin.on("data", onData);
    modes.enable();
    surface?.enter();
    surface?.invalidate();
    draw();
  };
  const suspend = () => {
    if (suspended || finishing) return;
    // Windows has no job control (nor SIGCONT to listen for).
    if (process.platform === "win32" && !options.stopProcess) return controller.note("Ctrl-Z: this system cannot suspend Keen");
    suspended = true;
    if (timer) clearTimeout(timer);
    timer = undefined;
    stdin.off("data", onData);
    surface?.leave();
    modes.disable();
    process.once("SIGCONT", onContinue);
    try {
      (options.stopProcess ?? (() => process.kill(0, "SIGTSTP")))();
    } catch {
      // The stop failed: take the terminal back at once.
      process.removeListener("SIGCONT", onContinue);
      onContinue();
      controller.note("Ctrl-Z: this system cannot suspend Keen");
    }
  };

  const decoder = new KeyDecoder();
  const text = new StringDecoder("utf8");
  let escTimer: NodeJS.Timeout | undefined;
  const dispatch = (events: InputEvent[]) => {
    for (const ev of events) {
      if (ev.type === "focus") {
        notifier.setFocused(ev.focused);
        continue;
      }
      try {
        handleInput(controller, ev, lastFrame);
      } catch (error) {
        reportOnce(`input error: ${String((error as Error)?.stack ?? error)}`);
      }
    }
  };
  const onData = (chunk: Buffer | string) => {
    if (escTimer) clearTimeout(escTimer);
    dispatch(decoder.push(typeof chunk === "string" ? chunk : text.write(chunk)));
    if (decoder.waiting) escTimer = setTimeout(() => dispatch(decoder.flushEscape()), ESC_WAIT_MS);
  };

  const unsubscribe = client.subscribe((event: KeenEvent) => {
    controller.onEvent(event);
    notifier.onEvent(event);
  });
  // blessed reads no keys (keys.ts does): it gets a silent stream that only looks like a terminal.
  const silent = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => {} });
  surface = createBlessedSurface(blessed, silent, stdout, () => controller.ui.theme);
  modes.enable();
  stdin.on("data", onData);
  const onResize = () => requestFrame();
  stdout.on("resize", onResize);
  const onStdoutError = () => void finish({ reason: "signal", signal: "SIGHUP" });
  stdout.on("error", onStdoutError);
  stdin.on("end", onStdoutError);
  const ticker = setInterval(() => controller.animating() && requestFrame(), TICK_MS);

  const signals: NodeJS.Signals[] = options.handleSignals === false ? [] : ["SIGTERM", "SIGHUP", "SIGINT"];
  const onSignal = (signal: NodeJS.Signals) => void finish({ reason: "signal", signal });
  for (const s of signals) process.on(s, onSignal);

  const { sessionId, resume, problem, draft } = options.initial;
  if (problem) controller.showSetup(problem);
  if (draft) controller.editor.setText(draft);
  // The composition already chose the directory (--cwd, else the session's): the engine keeps it.
  if (resume && sessionId) controller.resume(sessionId, options.initial.cwd);
  controller.request({ kind: "list-models" }, (r) => {
    if (r.ok && !r.data.some((m) => m.available)) controller.showSetup("no model has a key or a reachable server");
  });
  draw();
  // The first frame does not wait for the markdown libraries (~100 ms): text shows plain until they
  // arrive. Loaded from a macrotask, after blessed has flushed that frame (its write is a nextTick).
  setImmediate(() => {
    options.afterFirstFrame?.();
    loadMarkdown().then(() => requestFrame(), () => {});
  });

  function finish(exit: Omit<TuiExit, "sessionId">): Promise<string | undefined> {
    if (finishing) return finishing;
    finishing = (async () => {
      clearInterval(ticker);
      if (timer) clearTimeout(timer);
      if (escTimer) clearTimeout(escTimer);
      for (const s of signals) process.removeListener(s, onSignal);
      process.removeListener("SIGCONT", onContinue);
      stdin.off("data", onData);
      stdin.off("end", onStdoutError);
      stdout.off("resize", onResize);
      modes.disable();
      try {
        surface?.destroy();
      } catch {
        // a closed terminal
      }
      await shutdown(controller);
      unsubscribe();
      const id = controller.view.sessionId;
      if (id && exit.signal !== "SIGHUP") {
        try {
          stdout.write(`Session ${id}\nResume it with: keen --resume ${id}\n`);
        } catch {
          // closed terminal
        }
      }
      stdout.off("error", onStdoutError);
      await options.onExit?.({ ...exit, sessionId: id });
      resolveDone(id);
      return id;
    })();
    return finishing;
  }

  return done;
}

/** Asks the engine to stop (a running turn is interrupted and stored) and waits for its answer, briefly. */
function shutdown(controller: TuiController): Promise<void> {
  // The engine's shutdown waits for the running turn: end it first (what it produced is stored).
  if (controller.view.running) controller.request({ kind: "interrupt" });
  return new Promise((resolve) => {
    const timeout = setTimeout(resolve, SHUTDOWN_WAIT_MS);
    controller.request({ kind: "shutdown" }, () => {
      clearTimeout(timeout);
      resolve();
    });
  });
}
