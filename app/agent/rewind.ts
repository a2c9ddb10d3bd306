import type { CommandOf } from "../../protocol/commands.js";
import type { EventDraft, KeenEvent } from "../../protocol/events.js";
import type { ContentBlock } from "../../protocol/messages.js";
import { CodedError, type ErrorCode } from "../../protocol/errors.js";
import type { SessionMeta, SessionStore } from "../../storage/store.js";
import { UnknownSessionError } from "../../storage/store.js";
import { checkpointState, planRewind } from "./checkpoints.js";
import { restoreFiles, rewoundFiles, type UndoFiles } from "./undo.js";

/* The engine's side of `rewind` and `fork-session` (the planning is in checkpoints.ts, pure). */

/** A refusal: code, text and (for `file_changed`) data, or the rewind's answer once its event is out. */
export type RewindAnswer =
  | { ok: true; data: { session_id: string; to: number; text: string; files: { path: string; action: "restored" | "deleted" }[] } }
  | { ok: false; code: ErrorCode; error: string; data?: { paths: string[] } };

/**
 * Rewinds a held session from its whole stored log: plans, checks every file (one changed outside Keen since
 * refuses all and nothing changes), puts the files back through the guard, then emits (stores) the `rewind` event.
 */
export async function runRewind(
  sessionId: string, events: KeenEvent[], command: CommandOf<"rewind">, files: UndoFiles, emit: (draft: EventDraft) => Promise<void>,
): Promise<RewindAnswer> {
  const conversation = command.conversation ?? true;
  const plan = planRewind(events, command.to, { files: command.files === true, conversation });
  if (!("checkpoint" in plan)) return { ok: false, code: plan.code, error: plan.error };
  if (plan.steps.length) {
    const done = restoreFiles(plan.steps, files);
    if (!done.ok) {
      if ("unavailable" in done) return { ok: false, code: "rewind_refused", error: "files cannot be restored in this session (its runner's tools are not Keen's)" };
      if ("changed" in done) {
        return { ok: false, code: "file_changed", error: `nothing was changed: ${done.changed.map((c) => c.error).join("; ")}`, data: { paths: done.changed.map((c) => c.path) } };
      }
      // Some files were put back before one failed: stored as a files-only rewind, so the log matches the disk.
      if (done.restored.length) {
        await emit({ kind: "rewind", to: plan.checkpoint.index, text: plan.checkpoint.text, conversation: false, files: rewoundFiles(done.restored) });
      }
      return { ok: false, code: "failed", error: `${done.failed.join("; ")}${done.restored.length ? `; put back: ${done.restored.map((s) => s.path).join(", ")}` : ""}` };
    }
  }
  const rewound = rewoundFiles(plan.steps);
  await emit({ kind: "rewind", to: plan.checkpoint.index, text: plan.checkpoint.text, conversation, files: rewound });
  return { ok: true, data: { session_id: sessionId, to: plan.checkpoint.index, text: plan.checkpoint.text, files: rewound } };
}

/** A fork made: its meta, the events copied into it, and the prompt it was forked before (its text when there is one). */
export interface Fork {
  meta: SessionMeta;
  events: KeenEvent[];
  at: number;
  text?: string;
}

/**
 * Forks a stored session: a new session whose log is a copy of the parent's log up to prompt `at`'s
 * `user-message` (all of it without `at`). A copy, not a reference to the parent: every session stays one
 * self-contained log, so `sessions rm`, `prune` or a compaction of the parent never changes a fork, and
 * loading, claiming and resuming need nothing new. The copy is the raw prefix (rewound turns and `rewind`
 * events included), so the fork's current history and checkpoints are the parent's at that point. Its events
 * take the fork's id; the CLI runner's session ids are left out, so a CLI-backed fork starts its own CLI session
 * (with the transcript) instead of continuing the parent's.
 */
export async function forkSession(
  store: SessionStore, source: string, at: number | undefined, newId: () => string,
): Promise<Fork> {
  const parent = await store.resolve(source).catch((error) => {
    throw error instanceof UnknownSessionError ? new CodedError(error.message, "unknown_session") : error;
  });
  const events = await store.load(parent.id);
  const { checkpoints } = checkpointState(events);
  const point = at ?? checkpoints.length + 1;
  if (point > checkpoints.length + 1) {
    throw new CodedError(`no prompt ${point}: the session has ${checkpoints.length} (fork at 1 to ${checkpoints.length + 1})`, "unknown_checkpoint");
  }
  const checkpoint = checkpoints[point - 1];
  const id = newId();
  const copied = (checkpoint ? events.slice(0, checkpoint.position) : events).map((event) => {
    const copy = { ...event, conversation_id: id } as KeenEvent;
    if (copy.kind === "turn-end" && copy.cli_session_id) delete copy.cli_session_id;
    return copy;
  });
  const now = Date.now();
  const meta: SessionMeta = {
    id, title: parent.title, cwd: parent.cwd, model: parent.model, created: now, updated: now,
    status: parent.status === "running" ? "success" : parent.status, parent: { id: parent.id, at: point },
  };
  await store.create(meta);
  if (copied.length) await store.append(id, copied);
  return { meta, events: copied, at: point, ...(checkpoint ? { text: checkpoint.text } : {}) };
}

/**
 * Files-only rewinds (and undos) since the session's last prompt, as context before the next one: the
 * conversation still holds the turns that changed those files, so the model is told they were put back.
 */
export function rewindContext(events: KeenEvent[]): ContentBlock[] {
  let from = events.length;
  while (from > 0 && events[from - 1]!.kind !== "user-message" && events[from - 1]!.kind !== "context-replacement") from--;
  return events.slice(from).flatMap((e) => {
    if (e.kind !== "rewind" || e.conversation || !e.files.length) return [];
    const files = e.files.map((f) => `${f.path} (${f.action})`).join(", ");
    const text = `<files_reverted>\nThe user put these files back as they were before prompt ${e.to}, undoing the changes made since: ${files}.\n</files_reverted>`;
    return [{ type: "text" as const, text, context: true as const }];
  });
}
