import { request, type EngineClient, type Request } from "../../protocol/client.js";
import { MODE_CYCLE, type PermissionMode } from "../../protocol/modes.js";
import type { ResponseTo } from "../../protocol/responses.js";
import type { EventOf, KeenEvent } from "../../protocol/events.js";
import type { Theme } from "../../themes/index.js";
import { Editor } from "./editor.js";
import { composeFrame, createUi, type Frame, type UiState } from "./frame.js";
import { createSessionView, reduce, type LocalAction, type SessionView } from "./state.js";
import { DIFF_AT_FIRST_CHANGE } from "./views/diff-pane.js";
import { TranscriptCache } from "./views/transcript.js";
import { customOnly, parseSlash } from "./slash.js";
import { imageMentions } from "./image-mentions.js";

/** The status bar's note while an interrupt is on its way; cleared when the turn ends. */
const INTERRUPTING = "interrupting…";

/** What the controller needs from the outside world; start.ts supplies the real ones, tests fakes. */
export interface ControllerDeps {
  client: EngineClient;
  theme: Theme;
  initial: { cwd: string; model: string; sessionId?: string; permissionMode: PermissionMode; unconfined?: boolean };
  history?: string[];
  saveHistory?: (prompt: string) => void;
  /** Puts text on the clipboard (OSC 52). */
  copy?: (text: string) => void;
  /** Opens the prompt in $EDITOR; resolves with the edited text (undefined: unchanged or failed). */
  editExternal?: (text: string) => Promise<string | undefined>;
  /** Resolves a theme name (`/theme`); throws for an unknown one. */
  themeFor?: (name: string) => Theme;
  /** Asks for a frame; `urgent` for keystrokes (drawn at once unless a frame was just drawn). */
  requestFrame: (urgent?: boolean) => void;
  /** Forgets what is on the terminal and draws everything again (Ctrl-L, after $EDITOR). */
  redraw: () => void;
  /** The user asked to leave. */
  exit: () => void;
  /** Remembers the side panes shown (Alt-T, Alt-D, Alt-Z) for the next runs. */
  savePanes?: (panes: UiState["panes"]) => void;
  /** Ctrl-Z: steps the screen aside and stops the process; the screen comes back on SIGCONT. */
  suspend?: () => void;
  /** Alt-M: takes the mouse or leaves it to the terminal; returns whether Keen has it now. */
  toggleMouse?: () => boolean;
  /** `/export`: the stored transcript of a session as markdown. */
  transcriptMarkdown?: (sessionId: string) => Promise<string>;
  now?: () => number;
}

/**
 * The TUI's state machine: engine events in (through the reducer), input
 * actions out as commands. It never draws; `frame()` composes what the
 * blessed glue shows.
 */
export class TuiController {
  readonly view: SessionView;
  readonly ui: UiState;
  readonly editor: Editor;
  readonly cache = new TranscriptCache();
  private setupShown = false;
  private lastDiffCount = 0;
  exitArmedUntil = 0;

  constructor(readonly deps: ControllerDeps) {
    this.view = createSessionView(deps.initial);
    this.ui = createUi(deps.theme);
    this.editor = new Editor(deps.history ?? []);
  }

  now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /** Every engine event, live or replayed. Contract: never throws (a bad event must not take the terminal down). */
  onEvent(event: KeenEvent): void {
    try {
      // No provider: the setup table instead of one more error line (once; later refusals show as errors).
      if (event.kind === "response" && event.error_code === "no_provider" && this.showSetup(event.error ?? "")) return this.deps.requestFrame();
      const before = this.view.permissions[0]?.request_id;
      reduce(this.view, event);
      if (this.view.permissions[0]?.request_id !== before) this.ui.permission = { scroll: 0 };
      if (this.view.askContinue && !this.ui.overlay) this.ui.overlay = { kind: "continue" };
      if (event.kind === "result" && !("replay" in event && event.replay)) this.turnEnded(event.status);
      if (this.view.diffs.length !== this.lastDiffCount) {
        if (this.ui.diffFollow || this.view.diffs.length < this.lastDiffCount) this.ui.diffIndex = Math.max(0, this.view.diffs.length - 1);
        this.ui.diffScroll = DIFF_AT_FIRST_CHANGE;
        this.lastDiffCount = this.view.diffs.length;
      }
    } catch (error) {
      reduce(this.view, { kind: "local-notice", level: "error", text: `display error: ${String(error)}` });
    }
    this.deps.requestFrame();
  }

  /** Applies a local action (a notice, a mode change) and redraws. */
  local(action: LocalAction): void {
    reduce(this.view, action);
    this.deps.requestFrame();
  }

  notice(text: string, level: "info" | "warning" | "error" = "info"): void {
    this.local({ kind: "local-notice", level, text });
  }

  /** A short message in the status bar. */
  note(text: string, ms = 2500): void {
    this.ui.note = { text, until: this.now() + ms };
    this.deps.requestFrame();
  }

  /** Sends a command with an id; `onResponse` gets the engine's typed answer (after the transcript has taken it). */
  request<C extends Request>(command: C, onResponse?: (response: ResponseTo<C["kind"]>) => void): void {
    const answered = request(this.deps.client, command);
    if (!onResponse) return;
    void answered.then((response) => {
      try {
        onResponse(response);
      } catch (error) {
        reduce(this.view, { kind: "local-notice", level: "error", text: `display error: ${String(error)}` });
      }
      this.deps.requestFrame();
    });
  }

  /** Shows what to set to get a provider, once; false when it was shown already. */
  showSetup(message: string): boolean {
    if (this.setupShown) return false;
    this.setupShown = true;
    this.local({ kind: "local-notice", level: "setup", text: `No model provider is configured (${message}).` });
    return true;
  }

  /** Asks the engine for the workspace's custom commands (completion and help show them). */
  loadCommands(then?: () => void): void {
    this.request({ kind: "list-commands" }, (r) => {
      // No setup yet (no provider): no custom commands to offer, and no error line for it.
      this.ui.customCommands = r.ok
        ? r.data.map((c) => ({ name: c.name, help: `${c.description} (${c.source === "user" ? "user" : c.file})`, ...(c.argument_hint ? { args: c.argument_hint } : {}) }))
        : [];
      then?.();
    });
  }

  /**
   * Sends a prompt, or queues it while a turn runs (see `UiState.queue`). A
   * prompt that starts with a custom command's `/name` is sent as that command,
   * the rest as its arguments; the engine expands it. `@image.png` mentions go with it as images.
   */
  prompt(text: string): void {
    if (this.view.running) {
      this.ui.queue.push(text);
      return this.deps.requestFrame(true);
    }
    if (text.startsWith("!")) return this.shell(text.slice(1).trim());
    this.local({ kind: "local-prompt", text });
    this.ui.undoArmed = false;
    const slash = parseSlash(text);
    const custom = slash && customOnly(this.ui.customCommands).some((c) => c.name === slash.name) ? slash : undefined;
    const images = imageMentions(text);
    const withImages = images.length ? { images } : {};
    const command = custom ? { kind: "prompt" as const, command: custom.name, text: custom.arg, ...withImages } : { kind: "prompt" as const, text, ...withImages };
    this.request(command, (r) => {
      if (r.ok) return;
      reduce(this.view, { kind: "local-prompt-failed" });
      this.unqueue("The queued prompts were not sent: they are back in the input.");
    });
    this.ui.transcriptScroll = { follow: true, index: 0, line: 0 };
  }

  /**
   * The user's own `!command`: the engine runs it in the workspace (no approval; the sandbox setting applies),
   * its output shows under it, and the next prompt gives command and output to the model.
   */
  shell(command: string): void {
    if (!command) return this.notice("Type a command after !, e.g. !git status (a prompt cannot start with !).", "warning");
    this.ui.undoArmed = false;
    this.ui.transcriptScroll = { follow: true, index: 0, line: 0 };
    this.request({ kind: "shell", command }, () => {
      // It ended (or was refused): the next queued prompt may go, as after a turn.
      this.view.running = false;
      this.turnEnded("success");
    });
  }

  /** Takes the newest queued prompt back into an empty input to edit it (or clear it: removed). */
  editQueued(): boolean {
    if (!this.ui.queue.length || !this.editor.isEmpty()) return false;
    this.editor.setText(this.ui.queue.pop()!);
    this.deps.requestFrame(true);
    return true;
  }

  /** A turn ended: the next queued prompt starts, unless the user stopped the turn (then the queue waits in the input). */
  private turnEnded(status: EventOf<"result">["status"]): void {
    // The interrupt landed (the transcript says "Interrupted."); its note would otherwise outlast the turn into the next one.
    if (this.ui.note?.text === INTERRUPTING) this.ui.note = undefined;
    if (!this.ui.queue.length || this.view.running) return;
    if (status === "interrupted") return this.unqueue("Interrupted: the queued prompts are back in the input, not sent.");
    // The queued prompt is the user's next instruction: it answers a pending "continue?" too.
    if (this.ui.overlay?.kind === "continue") this.ui.overlay = undefined;
    this.prompt(this.ui.queue.shift()!);
  }

  /** Moves every queued prompt into the input, before what is typed there, so nothing is lost or sent unasked. */
  private unqueue(why: string): void {
    if (!this.ui.queue.length) return;
    const typed = this.editor.value();
    this.editor.setText([...this.ui.queue.splice(0), ...(typed ? [typed] : [])].join("\n\n"));
    this.notice(why, "warning");
  }

  interrupt(): boolean {
    if (!this.view.running) return false;
    this.request({ kind: "interrupt" });
    this.note(INTERRUPTING);
    return true;
  }

  setMode(mode: PermissionMode): void {
    this.request({ kind: "set-permission-mode", mode }, (r) => {
      if (r.ok) {
        this.local({ kind: "local-mode", mode });
        this.note(`permission mode: ${mode}`);
      }
    });
  }

  cycleMode(): void {
    const i = MODE_CYCLE.indexOf(this.view.permissionMode);
    this.setMode(MODE_CYCLE[(i + 1) % MODE_CYCLE.length]!);
  }

  setModel(model: string): void {
    this.request({ kind: "set-model", model }, (r) => {
      if (r.ok) {
        this.local({ kind: "local-model", model });
        this.note(`model: ${model}`);
      }
    });
  }

  /** Answers the oldest permission request. */
  answerPermission(decision: "allow-once" | "allow-always" | "deny", message?: string): void {
    const request = this.view.permissions[0];
    if (!request) return;
    this.request({ kind: "permission-response", request_id: request.request_id, decision, ...(message ? { message } : {}) });
    // Drawn as answered at once; the engine's tool-start or tool-result follows.
    this.view.permissions = this.view.permissions.slice(1);
    this.ui.permission = { scroll: 0 };
    this.deps.requestFrame(true);
  }

  /** Starts over in a new session (the old one stays resumable). */
  newSession(): void {
    if (!this.clearFor()) return;
    this.request({ kind: "new-session", cwd: this.view.cwd });
    this.note("new session");
  }

  /** Switches to a stored session: clears the transcript and lets the engine replay its history; `cwd` moves it (`keen --resume x --cwd y`). */
  resume(session: string, cwd?: string): void {
    if (!this.clearFor()) return;
    this.request({ kind: "resume-session", session, replay: true, ...(cwd ? { cwd } : {}) }, (r) => {
      if (!r.ok) return;
      this.view.sessionId = r.data.session_id;
      this.view.model = r.data.model;
      this.view.cwd = r.data.cwd;
      this.note(`resumed ${r.data.session_id.slice(0, 8)}`);
    });
  }

  /** Clears the view for another session (whose history the engine replays); false, and says why, while a turn runs. */
  clearFor(): boolean {
    if (this.busy()) return false;
    this.local({ kind: "local-clear" });
    this.lastDiffCount = 0;
    this.resetScroll();
    return true;
  }

  /** A cleared transcript starts at its end, with nothing selected in the panes. */
  private resetScroll(): void {
    Object.assign(this.ui, { diffIndex: 0, diffScroll: 0, diffFollow: true, transcriptScroll: { follow: true, index: 0, line: 0 } });
    this.ui.tools = { expanded: new Set(), scroll: { follow: true, index: 0, line: 0 } };
  }

  /** The engine switches sessions only between turns; the transcript must not be cleared for nothing. */
  private busy(): boolean {
    if (!this.view.running) return false;
    this.notice("A turn is running: interrupt it first (Esc), then switch sessions.", "warning");
    return true;
  }

  /** The screen for a size; remembers the scroll positions as drawn. */
  frame(cols: number, rows: number): Frame {
    const frame = composeFrame(this.view, this.ui, this.editor, this.cache, cols, rows, this.now());
    this.ui.transcriptScroll = frame.scrolls.transcript;
    this.ui.tools.scroll = frame.scrolls.tools;
    this.ui.diffScroll = frame.scrolls.diff;
    return frame;
  }

  /** True while something on screen moves by itself (spinner, countdown, clock): the glue keeps ticking. */
  animating(): boolean {
    if (this.view.retry) return true;
    // One more frame once a note has expired, or its last frame would keep showing it.
    if (this.ui.note) {
      if (this.ui.note.until <= this.now()) this.ui.note = undefined;
      return true;
    }
    return this.view.running;
  }
}
