import type { KeenEvent } from "../../protocol/events.js";

/** One file the last turn changed: its text before the turn (null: the turn created it) and after. */
export interface UndoStep {
  path: string;
  before: string | null;
  after: string;
}

const FILE_TOOLS = new Set(["write_file", "edit_file"]);

/**
 * What undoing the session's last turn means, from its stored events: the
 * writes and edits that succeeded after the last user message, folded per
 * file into (text before the turn, text after it). Pure. A change stored
 * without its texts (too large to keep) cannot be undone, and says so.
 */
export function planUndo(events: KeenEvent[]): { steps: UndoStep[] } | { error: string } {
  let start = -1;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]!.kind === "user-message") {
      start = i;
      break;
    }
  }
  if (start < 0) return { error: "nothing to undo: the session has no turn yet" };
  const steps = new Map<string, UndoStep>();
  for (const event of events.slice(start)) {
    if (event.kind !== "tool-result" || event.is_error || !FILE_TOOLS.has(event.tool_name)) continue;
    const details = event.details ?? {};
    const path = details.path;
    if (typeof path !== "string") continue;
    if (typeof details.new_text !== "string") {
      return { error: `${path}: the change was too large for Keen to keep its previous contents; undo it with git` };
    }
    const before = typeof details.old_text === "string" ? details.old_text : null;
    const known = steps.get(path);
    steps.set(path, { path, before: known ? known.before : before, after: details.new_text });
  }
  if (!steps.size) return { error: "nothing to undo: the last turn wrote or edited no file" };
  return { steps: [...steps.values()] };
}
