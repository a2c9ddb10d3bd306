import type { KeenEvent } from "../../protocol/events.js";
import { nestedIn } from "../../protocol/kinds.js";

/** One file the last turn changed: its text before the turn (null: the turn created it) and after. */
export interface UndoStep {
  path: string;
  before: string | null;
  after: string;
}

/**
 * What undoing the session's last turn means, from its stored events: the
 * writes and edits that succeeded after the last user message, folded per
 * file into (text before the turn, text after it). Pure. A change stored
 * without its texts (too large to keep) cannot be undone, and says so.
 * Changes are known by the `tool_kind` ("edit") of their `tool-use` and the
 * file texts their results carry (a `tool-use` stored before tools declared
 * kinds has none: its result's texts alone decide).
 */
export function planUndo(events: KeenEvent[]): { steps: UndoStep[] } | { error: string; refused?: boolean } {
  let start = -1;
  for (let i = events.length - 1; i >= 0; i--) {
    // A subagent's user message is inside the turn it ran in: the turn began before it.
    if (events[i]!.kind === "user-message" && !nestedIn(events[i]!)) {
      start = i;
      break;
    }
  }
  if (start < 0) return { error: "nothing to undo: the session has no turn yet" };
  const steps = new Map<string, UndoStep>();
  // Per call: whether its tool is an `edit` one; undefined for a tool-use stored before tools declared kinds.
  const isEdit = new Map<string, boolean | undefined>();
  for (const event of events.slice(start)) {
    if (event.kind === "tool-use") isEdit.set(event.tool_call_id, event.tool_kind === undefined ? undefined : event.tool_kind === "edit");
    if (event.kind !== "tool-result" || event.is_error || isEdit.get(event.tool_call_id) === false) continue;
    const details = event.details ?? {};
    const path = details.path;
    if (typeof path !== "string") continue;
    // An undeclared call counts only when its result carries a file's texts (write_file and edit_file stored them).
    if (isEdit.get(event.tool_call_id) === undefined && typeof details.new_text !== "string") continue;
    if (typeof details.new_text !== "string") {
      return { error: `${path}: the change was too large for Keen to keep its previous contents; undo it with git`, refused: true };
    }
    const before = typeof details.old_text === "string" ? details.old_text : null;
    const known = steps.get(path);
    steps.set(path, { path, before: known ? known.before : before, after: details.new_text });
  }
  if (!steps.size) return { error: "nothing to undo: the last turn wrote or edited no file" };
  return { steps: [...steps.values()] };
}

/** What `undo` answers: `ok` with the files (restored or only listed), or why nothing changed. */
export type UndoAnswer =
  | { ok: true; data: { files: UndoFile[]; restored: boolean } }
  | { ok: false; code: "nothing_to_undo" | "undo_refused" | "failed"; error: string; data?: { files: UndoFile[] } };

type UndoFile = { path: string; action: "restore" | "remove" };

/** The file access undo needs (the session's setup: through the filesystem guard). */
export interface UndoFiles {
  checkFile?(path: string, expected: string): string | undefined;
  restoreFile?(path: string, content: string | null): string | undefined;
}

/**
 * Undoes (with `confirm`; else only lists) the last turn's writes and edits
 * from its stored events. A file changed since the turn refuses the whole
 * undo before anything is written.
 */
export async function runUndo(events: KeenEvent[], files: () => Promise<UndoFiles>, confirm: boolean): Promise<UndoAnswer> {
  const plan = planUndo(events);
  if ("error" in plan) return { ok: false, code: plan.refused ? "undo_refused" : "nothing_to_undo", error: plan.error };
  const { checkFile, restoreFile } = await files();
  if (!checkFile || !restoreFile) return { ok: false, code: "undo_refused", error: "undo is not available for this session" };
  const changed = plan.steps.flatMap((step) => checkFile(step.path, step.after) ?? []);
  if (changed.length) return { ok: false, code: "undo_refused", error: `nothing was restored: ${changed.join("; ")}` };
  const listed = plan.steps.map((step) => ({ path: step.path, action: step.before === null ? "remove" as const : "restore" as const }));
  if (!confirm) return { ok: true, data: { files: listed, restored: false } };
  const failed = plan.steps.flatMap((step) => restoreFile(step.path, step.before) ?? []);
  if (failed.length) return { ok: false, code: "failed", error: failed.join("; "), data: { files: listed } };
  return { ok: true, data: { files: listed, restored: true } };
}
