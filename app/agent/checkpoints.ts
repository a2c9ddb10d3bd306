import type { KeenEvent } from "../../protocol/events.js";
import { typedText } from "./user-shell.js";

/*
 * Checkpoints, read from a session's append-only log (pure functions over
 * events, no store): every prompt is one, and every file change Keen's tools
 * made carries the texts needed to put it back (the tool result's
 * `old_text`/`new_text`, as `undo` has always used them). Positions are
 * indices in the whole log, so "the files as they were at prompt k" means:
 * undo every change still in place that was made after prompt k's
 * `user-message` — also those of turns a conversation-only rewind left out,
 * because they happened after that point too.
 */

/** A prompt of the session's current (rewound) history. */
export interface Checkpoint {
  /** 1-based in the current history. */
  index: number;
  text: string;
  ts: number;
  /** Index of its `user-message` in the log. */
  position: number;
}

/** One successful write or edit by Keen's tools. */
export interface FileChange {
  position: number;
  path: string;
  /** The text before the change; null: the change created the file. */
  before: string | null;
  /** The text it left; undefined when it was too large for Keen to keep (it cannot be put back). */
  after: string | undefined;
  /** Not yet reverted by a file rewind (or undo). */
  live: boolean;
}

/** The checkpoints of the current history and every file change in the log. */
export interface CheckpointState {
  checkpoints: Checkpoint[];
  changes: FileChange[];
}

/**
 * Replays the log: prompts become checkpoints, a `rewind` with `conversation` cuts the list at `to`, and one that
 * put files back marks the changes it reverted (those after its checkpoint, on the paths it lists).
 * Changes are known by the `tool_kind` ("edit") of their `tool-use` and the file texts their results carry
 * (a `tool-use` stored before tools declared kinds has none: its result's texts alone decide).
 */
export function checkpointState(events: KeenEvent[]): CheckpointState {
  const checkpoints: Checkpoint[] = [];
  const changes: FileChange[] = [];
  const turns = new Set<string>();
  const isEdit = new Map<string, boolean | undefined>();
  events.forEach((event, position) => {
    if (event.kind === "user-message" && !turns.has(event.turn_id)) {
      turns.add(event.turn_id);
      checkpoints.push({ index: checkpoints.length + 1, text: typedText(event.message), ts: event.ts, position });
    } else if (event.kind === "rewind") {
      const target = checkpoints[event.to - 1];
      if (!target) return;
      const paths = new Set(event.files.map((f) => f.path));
      for (const change of changes) if (change.position > target.position && paths.has(change.path)) change.live = false;
      if (event.conversation) checkpoints.length = event.to - 1;
    } else if (event.kind === "tool-use") {
      isEdit.set(event.tool_call_id, event.tool_kind === undefined ? undefined : event.tool_kind === "edit");
    } else if (event.kind === "tool-result" && !event.is_error && isEdit.get(event.tool_call_id) !== false) {
      const details = event.details ?? {};
      if (typeof details.path !== "string") return;
      const after = typeof details.new_text === "string" ? details.new_text : undefined;
      // An undeclared call counts only when its result carries a file's texts (write_file and edit_file stored them).
      if (isEdit.get(event.tool_call_id) === undefined && after === undefined) return;
      const before = typeof details.old_text === "string" ? details.old_text : null;
      changes.push({ position, path: details.path, before, after, live: true });
    }
  });
  return { checkpoints, changes };
}

/** Putting one file back: the text Keen last left in it (checked first) and the text it goes back to (null: delete it). */
export interface RestoreStep {
  path: string;
  expected: string;
  before: string | null;
}

/** Why nothing can be rewound, as the response's error code and text. */
export interface RewindRefusal {
  code: "nothing_to_rewind" | "unknown_checkpoint" | "rewind_refused";
  error: string;
}

/** The live changes made after a checkpoint, folded per file (in the order the files were first changed). */
export function restoreSteps(state: CheckpointState, checkpoint: Checkpoint): RestoreStep[] | RewindRefusal {
  const steps = new Map<string, RestoreStep>();
  for (const change of state.changes) {
    if (!change.live || change.position <= checkpoint.position) continue;
    if (change.after === undefined) {
      return { code: "rewind_refused", error: `${change.path}: the change was too large for Keen to keep its previous contents; restore it with git` };
    }
    const known = steps.get(change.path);
    steps.set(change.path, { path: change.path, before: known ? known.before : change.before, expected: change.after });
  }
  return [...steps.values()];
}

/** What a rewind to prompt `to` would do: its checkpoint and, with `files`, the files to put back. */
export function planRewind(
  events: KeenEvent[], to: number, options: { files: boolean; conversation: boolean },
): { checkpoint: Checkpoint; steps: RestoreStep[] } | RewindRefusal {
  const state = checkpointState(events);
  if (!state.checkpoints.length) return { code: "nothing_to_rewind", error: "nothing to rewind: the session has no prompt yet" };
  if (!options.files && !options.conversation) return { code: "nothing_to_rewind", error: "nothing to rewind: neither files nor conversation asked for" };
  const checkpoint = state.checkpoints[to - 1];
  if (!checkpoint) return { code: "unknown_checkpoint", error: `no prompt ${to}: the session has ${state.checkpoints.length}` };
  if (!options.files) return { checkpoint, steps: [] };
  const steps = restoreSteps(state, checkpoint);
  return Array.isArray(steps) ? { checkpoint, steps } : steps;
}

/**
 * What one `undo` reverts: the changes still in place of the latest turn that has any, as a files-only rewind to
 * that turn's prompt. Successive undos walk back turn by turn, because each marks its changes reverted.
 */
export function planUndoStep(events: KeenEvent[]): { checkpoint: Checkpoint; steps: RestoreStep[] } | { error: string; refused?: boolean } {
  const state = checkpointState(events);
  if (!state.checkpoints.length) return { error: "nothing to undo: the session has no turn yet" };
  const latest = lastOf(state.changes, (c) => c.live);
  if (!latest) return { error: "nothing to undo: no file change of Keen's is still in place" };
  const checkpoint = lastOf(state.checkpoints, (c) => c.position < latest.position);
  if (!checkpoint) return { error: "nothing to undo: the changes left were made by rewound turns; rewind the files to a prompt instead" };
  const steps = restoreSteps(state, checkpoint);
  return Array.isArray(steps) ? { checkpoint, steps } : { error: steps.error, refused: true };
}

/** The current history's checkpoints as `list-checkpoints` answers, each with the files a file rewind to it would put back. */
export function listCheckpoints(events: KeenEvent[]): { index: number; text: string; ts: number; files: string[] }[] {
  const state = checkpointState(events);
  return state.checkpoints.map((checkpoint) => ({
    index: checkpoint.index, text: checkpoint.text, ts: checkpoint.ts,
    files: [...new Set(state.changes.filter((c) => c.live && c.position > checkpoint.position).map((c) => c.path))],
  }));
}

function lastOf<T>(list: T[], test: (item: T) => boolean): T | undefined {
  for (let i = list.length - 1; i >= 0; i--) if (test(list[i]!)) return list[i];
  return undefined;
}
