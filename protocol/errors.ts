/*
 * The `error_code` a failed `response` (and an `error` event) carries beside
 * its human `error` text: clients branch on the code, never on the text. No
 * zod here: the engine and the CLI import these on every run, and the schemas
 * of protocol/responses.ts (which re-exports all of this) are built only where
 * something validates or publishes them.
 */

/**
 * Why a command failed or a turn reported an error, with what it means for people:
 * docs/PROTOCOL.md's code table is generated from this (test/e2e/protocol-doc.test.ts).
 */
export const ERROR_CODES = {
  invalid: "the line is not a valid command (bad JSON, unknown kind, a missing or mistyped field)",
  empty_prompt: "`prompt` (or `shell`) with no text (and no images)",
  bad_image: "`prompt`: an image could not be sent (not found or refused by the filesystem guard, not png/jpeg/gif/webp, over the caps even downscaled, more than 10, or a CLI runner session): the text names it",
  no_provider: "no provider is configured, or the chosen provider's API key is not set: the text names what to set",
  unknown_model: "`set-model` (or a turn's setup): the model reference names no known provider or cannot be used as configured",
  unknown_command: "`prompt` with `command`: no custom command of that name",
  unknown_session: "`resume-session`: no stored session matches the id or prefix, or the prefix matches several",
  busy: "a turn (or compaction) is running in this engine: send `interrupt` first, or wait for it",
  session_busy: "another live process holds the session: wait for its turn to end",
  permission_ceiling: "`set-permission-mode`: wider than the mode the process was started with or than the project's config allows",
  no_request: "`permission-response`: no open permission request has that `request_id`",
  interrupted: "`prompt`: dropped, because an `interrupt` came first",
  shutting_down: "the engine is shutting down or has shut down (after `shutdown`, or stdin ended)",
  nothing_to_undo: "`undo`: the session has no turn yet, or its last turn wrote or edited no file",
  undo_refused: "`undo`: nothing was changed, because a file changed since the turn, a change was too large to keep, or undo is unavailable for this session",
  nothing_to_rewind: "`rewind`: the session has no prompt yet, or neither `files` nor `conversation` was asked for",
  unknown_checkpoint: "`rewind`, `fork-session`: no prompt has that index in the session's current history",
  file_changed: "`rewind`: nothing was changed, because a file changed outside Keen since (`data` `{ paths }`)",
  rewind_refused: "`rewind`: nothing was changed, because a change was too large for Keen to keep its contents, or files cannot be restored in this session (the CLI runner's own tools)",
  nothing_to_compact: "`compact`: the session has no conversation yet",
  compaction_failed: "`compact`: the summary request failed; the conversation is unchanged",
  unknown_job: "`kill-job`: no background job of this engine has that `job_id`",
  job_ended: "`kill-job`: the job had already exited or been killed (`data` `{ job_id, state, exit_code }`)",
  provider: "`error` event: the model provider failed (after retries)",
  runner: "`error` event: the CLI runner (e.g. `claude`) failed",
  timeout: "`error` event: the turn ran out of time (`--timeout`)",
  store: "`error` event: the session store could not be written; the turn stopped",
  max_turns: "`error` event: the step limit was reached without an answer",
  structured_output: "`error` event: the answer did not satisfy `--output-schema`",
  hook_blocked: "`error` event: a UserPromptSubmit hook blocked the prompt, so the turn did not run; the text gives its reason",
  failed: "anything else (a session store that cannot be read, a setup that failed): the text says what",
} as const satisfies Record<string, string>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An Error whose `code` a client gets as `error_code`. */
export class CodedError extends Error {
  constructor(message: string, readonly code: ErrorCode) {
    super(message);
  }
}

/** The error's code when it carries one of Keen's (`CodedError`, or any error with such a `code`), else `fallback`. */
export function errorCodeOf(error: unknown, fallback: ErrorCode = "failed"): ErrorCode {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && Object.hasOwn(ERROR_CODES, code) ? (code as ErrorCode) : fallback;
}
