import { isAbsolute, relative, resolve } from "node:path";
import type { DiffEntry, SessionView, TranscriptItem } from "./view-types.js";

/*
 * What a rewind or an undo does to the session as the TUI shows it. The
 * reducer calls these for the stored `rewind` event (live and replayed alike)
 * (an undo stores one too, with `conversation: false`).
 *
 * The rewound turns leave the transcript (and the tool panel): what stays on
 * screen is what the model still has, as in Claude Code's and Codex's
 * rewinds; one notice line says what was rewound. The session's log keeps
 * them (`keen sessions show` has them). Diffs stay in the diff pane, because
 * a conversation rewind leaves the files as they are; the changes whose files
 * were put back are marked "reverted" there and under their calls.
 */

/** A rewind as the transcript takes it: the stored `rewind` event's fields. */
export interface RewindChange {
  to: number;
  text: string;
  conversation: boolean;
  files: { path: string; action: "restored" | "deleted" }[];
}

type UserItem = Extract<TranscriptItem, { type: "user" }>;

/** A prompt the conversation holds (one the engine refused never ran). */
function isPrompt(item: TranscriptItem): item is UserItem {
  return item.type === "user" && item.state !== "failed";
}

/** Index in `view.items` of the conversation's prompt number `n` (1-based), or -1. */
export function promptItemIndex(view: SessionView, n: number): number {
  let seen = 0;
  for (let i = 0; i < view.items.length; i++) {
    if (isPrompt(view.items[i]!) && ++seen === n) return i;
  }
  return -1;
}

/** The turn a new diff belongs to: the id of the newest prompt in the transcript (0 before the first). */
export function currentTurn(view: SessionView): number {
  for (let i = view.items.length - 1; i >= 0; i--) if (isPrompt(view.items[i]!)) return view.items[i]!.id;
  return 0;
}

/** Applies a rewind: the turns from prompt `to` on leave the transcript (conversation), the put-back files' diffs are marked. */
export function applyRewind(view: SessionView, change: RewindChange): string {
  const at = promptItemIndex(view, change.to);
  const turn = at >= 0 ? view.items[at]!.id : undefined;
  // A replay leaves rewound turns out: a rewind past the transcript's end has nothing on screen to take back.
  if (change.files.length && turn !== undefined) {
    const paths = new Set(change.files.map((f) => key(view, f.path)));
    markReverted(view, (d) => paths.has(key(view, d.path)) && d.turn >= turn);
  }
  let dropped = 0;
  if (change.conversation && at >= 0) {
    const gone = view.items.splice(at);
    dropped = gone.filter(isPrompt).length;
    const calls = new Set(gone.flatMap((it) => (it.type === "tool" ? [it.callId] : [])));
    view.toolOrder = view.toolOrder.filter((id) => !calls.has(id));
    for (const id of calls) view.tools.delete(id);
    const prompts = view.items.filter(isPrompt);
    const answers = view.items.filter((it) => it.type === "assistant");
    view.lastPrompt = prompts.at(-1)?.text;
    view.lastAnswer = answers.at(-1)?.text ?? "";
    view.askContinue = false;
  }
  return rewindNotice(change, dropped, view.cwd);
}

function markReverted(view: SessionView, which: (d: DiffEntry) => boolean): void {
  view.diffs.forEach((d, i) => {
    if (d.reverted || d.pending || !which(d)) return;
    view.diffs[i] = { ...d, reverted: true };
    const tool = view.tools.get(d.callId);
    if (tool) view.tools.set(d.callId, { ...tool, reverted: true });
  });
}

/** Paths compare resolved against the session's directory (results carry absolute paths; a relative one may come). */
function key(view: SessionView, path: string): string {
  return isAbsolute(path) ? path : resolve(view.cwd, path);
}

function rewindNotice(change: RewindChange, dropped: number, cwd: string): string {
  const prompt = change.text.replace(/\s+/g, " ").trim();
  const shown = prompt.length > 60 ? `${prompt.slice(0, 59)}…` : prompt;
  // A files-only rewind (and every undo) leaves the conversation: it reads as files put back, not as going back.
  const parts = [change.conversation ? `Rewound to before prompt ${change.to} ("${shown}")` : `Files put back as they were before prompt ${change.to} ("${shown}")`];
  // A replay may have left the rewound turns out already: then there is nothing to count.
  if (change.conversation) parts.push(dropped === 0 ? "the later turns left the conversation" : dropped === 1 ? "1 turn left the conversation" : `${dropped} turns left the conversation`);
  const restored = change.files.filter((f) => f.action === "restored").map((f) => shownPath(f.path, cwd));
  const deleted = change.files.filter((f) => f.action === "deleted").map((f) => shownPath(f.path, cwd));
  if (restored.length) parts.push(`restored ${restored.join(", ")}`);
  if (deleted.length) parts.push(`deleted ${deleted.join(", ")}`);
  if (!change.files.length) parts.push(change.conversation ? "files unchanged" : "no file needed changing");
  return `${parts.join("; ")}.`;
}

/** A path as the user reads it: relative to the workspace when inside it. */
export function shownPath(path: string, cwd: string): string {
  if (!isAbsolute(path)) return path;
  const rel = relative(cwd, path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}
