import type { TuiController } from "./controller.js";
import type { InputEvent } from "./keys.js";
import { shownPath } from "./rewind-state.js";
import { createRewindPicker, rewindModes, type RewindMode, type RewindPickerUi, type RewindPoint } from "./views/rewind-picker.js";
import { FOLLOW } from "./views/window.js";

/*
 * Going back: `/rewind` and Esc Esc (the picker of earlier prompts), `/fork`,
 * and `/undo`. Each is a command to the engine; what the screen shows after
 * comes from the engine's events (the stored `rewind` event) and answers.
 */

/** How soon a second Esc must follow the first to open the rewind picker. */
export const ESC_TWICE_MS = 1200;

/**
 * Esc on an empty, idle prompt: the first arms (and says so), a second soon
 * after opens the rewind picker. Other keys in between disarm it (handleInput).
 */
export function escapeOnEmpty(c: TuiController): void {
  if ((c.ui.escArmedUntil ?? 0) > c.now()) {
    c.ui.escArmedUntil = 0;
    return openRewind(c);
  }
  c.ui.escArmedUntil = c.now() + ESC_TWICE_MS;
  c.note("Esc again: rewind to an earlier prompt", ESC_TWICE_MS);
}

/** Asks the engine for the session's checkpoints and opens the picker on them. */
export function openRewind(c: TuiController): void {
  if (c.view.running) return c.note("a turn is running: Esc interrupts it first");
  if (!c.view.sessionId) return c.note("nothing to rewind yet: no prompt was sent");
  c.request({ kind: "list-checkpoints" }, (r) => {
    if (!r.ok) return c.note(r.error_code === "nothing_to_rewind" ? "nothing to rewind yet" : `rewind: ${r.error}`);
    if (!r.data.checkpoints.length) return c.note("nothing to rewind yet: no earlier prompt");
    c.ui.completion = undefined;
    c.ui.overlay = { kind: "rewind", picker: createRewindPicker(r.data.checkpoints) };
  });
}

const MODE_KEYS: Record<string, RewindMode> = { c: "conversation", f: "files", b: "both" };

/** A key while the rewind picker is open: arrows choose, Enter goes on, Esc goes back a step (or closes). */
export function rewindPickerInput(c: TuiController, p: RewindPickerUi, ev: InputEvent, key: string | undefined): void {
  const close = () => {
    c.ui.overlay = undefined;
    c.deps.requestFrame(true);
  };
  if (key === "C-c") return close();
  const point = p.points[p.selected];
  if (!p.step || !point) {
    if (key === "escape") return close();
    if (key === "enter" && point) p.step = { modes: rewindModes(p.points, point.index), selected: 0 };
    else p.selected = moved(p.selected, p.points.length, key);
    return c.deps.requestFrame(true);
  }
  const typed = ev.type === "text" ? MODE_KEYS[ev.text.toLowerCase()] : undefined;
  if (typed && p.step.modes.includes(typed)) p.step.selected = p.step.modes.indexOf(typed);
  if (key === "escape") p.step = undefined;
  else if (key === "enter" || (typed && p.step.modes.includes(typed))) {
    close();
    return rewind(c, point, p.step.modes[p.step.selected]!);
  } else p.step.selected = moved(p.step.selected, p.step.modes.length, key);
  c.deps.requestFrame(true);
}

function moved(at: number, count: number, key: string | undefined): number {
  const step = ({ up: -1, down: 1, pageup: -10, pagedown: 10, home: -count, end: count } as Record<string, number>)[key ?? ""] ?? 0;
  return Math.max(0, Math.min(count - 1, at + step));
}

/** Rewinds to just before `point`; the conversation's rewind puts the prompt back in the input, to edit and send. */
export function rewind(c: TuiController, point: RewindPoint, mode: RewindMode): void {
  const conversation = mode !== "files";
  c.request({ kind: "rewind", to: point.index, files: mode !== "conversation", conversation }, (r) => {
    if (!r.ok) return refused(c, r.error_code, r.error, r.data);
    c.ui.transcriptScroll = { ...FOLLOW };
    c.ui.tools.selected = undefined;
    if (conversation) {
      c.editor.setText(r.data.text);
      c.note(`rewound to before prompt ${r.data.to}: edit it and Enter sends`, 4000);
    } else c.note(`files rewound to before prompt ${r.data.to}`, 4000);
  });
}

/** A refused rewind changed nothing: say why, naming the files when they are the reason. */
function refused(c: TuiController, code: string, error: string, data: unknown): void {
  if (code === "file_changed") {
    const paths = (data as { paths?: unknown } | undefined)?.paths;
    const names = Array.isArray(paths) ? paths.map((p) => shownPath(String(p), c.view.cwd)).join(", ") : "";
    return c.notice(
      `Rewind refused, nothing was changed: ${names || "a file"} changed outside Keen since. Rewind the conversation only, or put ${names ? "them" : "it"} back first.`,
      "error",
    );
  }
  if (code === "nothing_to_rewind") return c.note("nothing to rewind");
  if (code === "busy") return c.notice("Rewind refused: a turn is running, or another Keen holds this session.", "warning");
  if (code === "unknown_checkpoint") return c.notice("Rewind refused: that prompt is no longer in the conversation; /rewind lists the ones that are.", "warning");
  if (code === "rewind_refused") return c.notice(`Rewind refused, nothing was changed: ${error}`, "error");
  c.notice(`rewind: ${error}`, "error");
}

/** `/fork [N]`: a new session sharing this one's history (up to before prompt N; default: all of it); the TUI switches to it. */
export function fork(c: TuiController, arg: string): void {
  const at = arg ? Number(arg) : undefined;
  if (at !== undefined && !(Number.isInteger(at) && at >= 1)) return c.notice(`/fork takes a prompt number (1 is the first prompt), not "${arg}"`, "error");
  const parent = c.view.sessionId;
  if (!parent) return c.note("nothing to fork yet: no prompt was sent");
  if (!c.clearFor()) return;
  c.request({ kind: "fork-session", ...(at !== undefined ? { at } : {}), replay: true }, (r) => {
    if (!r.ok) {
      c.notice(`fork: ${r.error}`, "error");
      return c.resume(parent);
    }
    c.view.sessionId = r.data.session_id;
    c.view.forkOf = r.data.parent;
    if (r.data.text && c.editor.isEmpty()) c.editor.setText(r.data.text);
    const point = r.data.text !== undefined ? `before prompt ${r.data.at}` : "with all of its history";
    // Whole ids: a fork and its parent are made close in time, so their short prefixes are often the same.
    c.notice(`Forked: you are in session ${r.data.session_id} now, a fork of ${r.data.parent} ${point}; the original is unchanged (keen --resume ${r.data.parent}).`);
  });
}

/** First `/undo` shows what would be restored; a second one, right after, does it. Each confirmed undo takes back one more turn. */
export function undo(c: TuiController): void {
  const confirm = c.ui.undoArmed === true;
  c.ui.undoArmed = false;
  c.request({ kind: "undo", ...(confirm ? { confirm: true } : {}) }, (r) => {
    if (!r.ok) return;
    const files = r.data.files
      .map((f) => `${f.action === "remove" ? "remove" : "restore"} ${f.path}`).join(", ");
    // The engine stored a `rewind` event for it (emitted before this answer): the diff pane has marked the changes already.
    if (confirm) return c.notice(`Undone: ${files}. /undo again takes back the turn before.`, "info");
    c.ui.undoArmed = true;
    c.notice(`/undo will ${files}. Type /undo again to do it.`, "warning");
  });
}
