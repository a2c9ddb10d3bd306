import type { EventDraft, KeenEvent } from "../../protocol/events.js";
import { planUndoStep, type RestoreStep } from "./checkpoints.js";

/** What `undo` answers: `ok` with the files (restored or only listed), or why nothing changed. */
export type UndoAnswer =
  | { ok: true; data: { files: UndoFile[]; restored: boolean; to: number } }
  | { ok: false; code: "nothing_to_undo" | "undo_refused" | "failed"; error: string; data?: { files: UndoFile[] } };

type UndoFile = { path: string; action: "restore" | "remove" };

/** The file access undo and rewind need (the session's setup: through the filesystem guard). */
export interface UndoFiles {
  checkFile?(path: string, expected: string): string | undefined;
  restoreFile?(path: string, content: string | null): string | undefined;
}

/**
 * Checks every file first (one changed since Keen left it refuses all, nothing written), then puts each back.
 * `changed`: the check's messages per path; `failed`: restores that failed after the check passed, and `restored`
 * the steps done before and after them (the caller stores those, so a later rewind expects their new text).
 */
export function restoreFiles(
  steps: RestoreStep[], files: UndoFiles,
): { ok: true } | { ok: false; changed: { path: string; error: string }[] } | { ok: false; failed: string[]; restored: RestoreStep[] } | { ok: false; unavailable: true } {
  const { checkFile, restoreFile } = files;
  if (!checkFile || !restoreFile) return { ok: false, unavailable: true };
  const changed = steps.flatMap((step) => {
    const error = checkFile(step.path, step.expected);
    return error ? [{ path: step.path, error }] : [];
  });
  if (changed.length) return { ok: false, changed };
  const failed: string[] = [];
  const restored = steps.filter((step) => {
    const error = restoreFile(step.path, step.before);
    if (error) failed.push(error);
    return !error;
  });
  return failed.length ? { ok: false, failed, restored } : { ok: true };
}

/**
 * `undo`: "rewind the last turn's files". Reverts (with `confirm`; else only lists) the changes still in place of
 * the latest turn that has any, and stores that as a `rewind` with `conversation: false`, so the next undo goes one
 * turn further back (a plain restore would itself count as a change, and a second undo would undo the undo).
 */
export async function runUndo(
  events: KeenEvent[], files: () => Promise<UndoFiles>, confirm: boolean, emit: (draft: EventDraft) => Promise<void>,
): Promise<UndoAnswer> {
  const plan = planUndoStep(events);
  if ("error" in plan) return { ok: false, code: plan.refused ? "undo_refused" : "nothing_to_undo", error: plan.error };
  const access = await files();
  if (!access.checkFile || !access.restoreFile) return { ok: false, code: "undo_refused", error: "undo is not available for this session" };
  const listed = plan.steps.map((step) => ({ path: step.path, action: step.before === null ? "remove" as const : "restore" as const }));
  const changed = plan.steps.flatMap((step) => access.checkFile!(step.path, step.expected) ?? []);
  if (changed.length) return { ok: false, code: "undo_refused", error: `nothing was restored: ${changed.join("; ")}` };
  if (!confirm) return { ok: true, data: { files: listed, restored: false, to: plan.checkpoint.index } };
  const done = restoreFiles(plan.steps, access);
  const put = done.ok ? plan.steps : "restored" in done ? done.restored : [];
  if (put.length) await emit({ kind: "rewind", to: plan.checkpoint.index, text: plan.checkpoint.text, conversation: false, files: rewoundFiles(put) });
  if (!done.ok) return { ok: false, code: "failed", error: "failed" in done ? done.failed.join("; ") : "files changed while restoring", data: { files: listed } };
  return { ok: true, data: { files: listed, restored: true, to: plan.checkpoint.index } };
}

/** Restored steps as a `rewind` event lists them. */
export function rewoundFiles(steps: RestoreStep[]): { path: string; action: "restored" | "deleted" }[] {
  return steps.map((step) => ({ path: step.path, action: step.before === null ? "deleted" : "restored" }));
}
