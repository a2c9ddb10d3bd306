import * as z from "zod";
import { publishable } from "./json-schema.js";
import { IMAGE_MEDIA_TYPES } from "./media.js";
import { permissionModeSchema } from "./mode-schema.js";

/*
 * Commands: the only way into a session engine. Every front end (keen run,
 * keen stdio, the TUI, ACP) parses its input into these and renders events.
 * Any command may carry an `id`; the engine answers each with exactly one
 * `response` event echoing it.
 */

/** A command's id: a string or a number, echoed as given in its `response` (a client matches answers by it). */
export const CommandIdSchema = z.union([z.string(), z.number()]);
export type CommandId = z.infer<typeof CommandIdSchema>;
const id = { id: CommandIdSchema.optional().describe("echoed in the response") };

export { PERMISSION_MODES, isWiderMode, type PermissionMode } from "./modes.js";
export { permissionModeSchema } from "./mode-schema.js";

/**
 * An image on a prompt: a file (relative to the session's directory, read through the filesystem guard) or the
 * bytes themselves, base64. png, jpeg, gif or webp; larger than 1568 pixels a side or 3.75 MB, it is downscaled.
 */
export const PromptImageSchema = z.union([
  z.strictObject({ path: z.string().min(1).describe("relative to the session's directory") }),
  z.strictObject({ data: z.string().min(1).describe("base64"), media_type: z.enum(IMAGE_MEDIA_TYPES) }),
]);
export type PromptImage = z.infer<typeof PromptImageSchema>;

/** Send a prompt; one sent during a turn runs after it (queued). With `command`, `text` is that custom command's arguments. */
export const PromptCommand = z.object({
  kind: z.literal("prompt"), ...id, text: z.string().describe("the prompt; with `command`, its arguments (may be empty)"),
  command: z.string().optional().describe("a custom command's name (`list-commands`), without `/`: the turn's prompt is its template with `text` as arguments"),
  images: z.array(PromptImageSchema).optional().describe("images sent with the prompt (at most 10): `{ path }` or `{ data, media_type }`"),
});
/** End the running turn as `interrupted` (and drop queued prompts). */
export const InterruptCommand = z.object({ kind: z.literal("interrupt"), ...id });
/** Answer a `permission-request`; `message` reaches the model with a denial. */
export const PermissionResponseCommand = z.object({
  kind: z.literal("permission-response"), ...id, request_id: z.string().describe("the `permission-request`'s"),
  decision: z.enum(["allow-once", "allow-always", "deny", "deny-always"]), message: z.string().optional().describe("to the model, with a denial"),
});
/** Use another model (`provider/model`) from the next turn on. */
export const SetModelCommand = z.object({ kind: z.literal("set-model"), ...id, model: z.string().describe("`provider/model`") });
/** Change the permission mode (keen stdio: never wider than the mode it was started with; never wider than the project's). */
export const SetPermissionModeCommand = z.object({ kind: z.literal("set-permission-mode"), ...id, mode: permissionModeSchema() });
/** Start a fresh session (in `cwd`, default the engine's); it is created at its first prompt. */
export const NewSessionCommand = z.object({
  kind: z.literal("new-session"), ...id, cwd: z.string().optional().describe("its directory; default the current session's"),
});
/**
 * Continue a stored session by id or unique prefix; `replay` re-emits its history (events with `replay: true`);
 * `cwd` moves it to another directory from its next turn on (remembered, like `keen run --session --cwd`).
 */
export const ResumeSessionCommand = z.object({
  kind: z.literal("resume-session"), ...id, session: z.string().describe("id or unique prefix"),
  replay: z.boolean().optional().describe("re-emit its history"),
  cwd: z.string().optional().describe("move it to another directory, remembered from its next turn"),
});
/** Stored sessions, newest first, optionally only those of one working directory. */
export const ListSessionsCommand = z.object({ kind: z.literal("list-sessions"), ...id, cwd: z.string().optional().describe("only this directory's") });
/** Models of the configured providers (`data`: `[{ model, provider, current, available }]`). */
export const ListModelsCommand = z.object({ kind: z.literal("list-models"), ...id });
/**
 * Workspace paths for `@` completion, matched against `query`, as the session's filesystem guard allows them:
 * never a gitignored file, nor one read_file would refuse (secrets such as `.env`, key files, credential directories).
 */
export const ListFilesCommand = z.object({
  kind: z.literal("list-files"), ...id,
  query: z.string().optional().describe("what follows `@`: path prefix, then file-name prefix, then substring (case-insensitive); default all"),
  limit: z.number().int().min(1).max(1000).optional().describe("at most this many paths (default 50)"),
});
/** The custom slash commands of the session's workspace and user config (docs/extensions.md). */
export const ListCommandsCommand = z.object({ kind: z.literal("list-commands"), ...id });
/** The Agent Skills of the session's workspace and user config (docs/extensions.md). */
export const ListSkillsCommand = z.object({ kind: z.literal("list-skills"), ...id });
/**
 * Revert the file writes and edits of the session's last turn from the contents Keen kept. Without `confirm`
 * the response only says what would be restored or removed; a file changed since the turn refuses the whole undo.
 */
export const UndoCommand = z.object({ kind: z.literal("undo"), ...id, confirm: z.boolean().optional().describe("restore; without it, only say what would change") });
/** End the engine once the running turn and queued prompts have finished (send `interrupt` first to stop sooner). */
export const ShutdownCommand = z.object({ kind: z.literal("shutdown"), ...id });

/** Compact the idle session's conversation now; `instructions` steer the summary. */
export const CompactCommand = z.object({ kind: z.literal("compact"), ...id, instructions: z.string().optional().describe("what the summary should focus on") });

/**
 * Run the user's own shell command in the session's directory (the TUI's `!command`): no permission prompt, the
 * sandbox setting applies as for bash. Its output streams as `shell-update`; the `shell` event (stored) gives the
 * command and output to the model as context with the next prompt.
 */
export const ShellCommand = z.object({ kind: z.literal("shell"), ...id, command: z.string().describe("the command line, run by bash") });

/** The session's prompts in its current (rewound) history, each a point `rewind` and `fork-session` can go back to. */
export const ListCheckpointsCommand = z.object({ kind: z.literal("list-checkpoints"), ...id });
/**
 * Go back to just before prompt `to` (1-based, as `list-checkpoints` numbers them): the later turns leave the
 * model's history (`conversation`, default true) and/or each file Keen's tools changed since goes back to its
 * text at that point (`files`, default false). Stored as a `rewind` event; nothing is deleted from the log.
 */
export const RewindCommand = z.object({
  kind: z.literal("rewind"), ...id, to: z.number().int().min(1).describe("the prompt to go back to (1-based index of `list-checkpoints`)"),
  files: z.boolean().optional().describe("restore the files Keen's tools changed since that prompt (default false)"),
  conversation: z.boolean().optional().describe("drop that prompt and the later turns from the model's history (default true)"),
});
/**
 * Start a new session holding a stored session's history before prompt `at` (default: all of it) and switch to it,
 * as `resume-session` does; the original is untouched.
 */
export const ForkSessionCommand = z.object({
  kind: z.literal("fork-session"), ...id, session: z.string().optional().describe("id or unique prefix; default the current session"),
  at: z.number().int().min(1).optional().describe("the fork holds the history before this prompt (1-based); default all of it"),
  replay: z.boolean().optional().describe("re-emit the fork's history"),
});

/**
 * End a background job (bash `background: true`) the user no longer wants: SIGTERM to its processes, SIGKILL to
 * its process group after a grace period, as the model's job_kill does. Acts at once, like `interrupt`.
 */
export const KillJobCommand = z.object({ kind: z.literal("kill-job"), ...id, job_id: z.string().describe("the `job` event's `job_id` (`job-1`, …)") });

/** Every command a front end can send. */
export const CommandSchema = z.discriminatedUnion("kind", [
  PromptCommand, InterruptCommand, PermissionResponseCommand, SetModelCommand, SetPermissionModeCommand,
  NewSessionCommand, ResumeSessionCommand, ListSessionsCommand, ListModelsCommand, ListFilesCommand, ListCommandsCommand, ListSkillsCommand, ShutdownCommand, UndoCommand, CompactCommand, ShellCommand,
  ListCheckpointsCommand, RewindCommand, ForkSessionCommand, KillJobCommand,
]);
export type Command = z.infer<typeof CommandSchema>;
export type CommandOf<K extends Command["kind"]> = Extract<Command, { kind: K }>;

/**
 * When and how each command is answered, for people: docs/PROTOCOL.md's
 * command table is generated from this and the schemas above (their field
 * descriptions), by test/e2e/protocol-doc.test.ts.
 */
export const COMMAND_ANSWERS: Record<Command["kind"], string> = {
  prompt: "when its turn has ended and the session is released: `data` `{ session_id, status }`; a prompt sent during a turn is queued and runs after it; `ok: false` if it could not start (e.g. the session is busy, or `command` names no custom command) or an `interrupt` sent after it came first (dropped)",
  interrupt: "at once, `data` `{ interrupted }`; the running turn ends `interrupted` (tools' process groups killed; the text streamed so far is its `result.text`, stored and in the next turn's history) within 3 s; queued prompts are dropped (each answered `ok: false`)",
  "permission-response": "at once; `ok: false` for no open request",
  "set-model": "at once, `data` `{ model }`; used from the next turn",
  "set-permission-mode": "at once, `data` `{ mode }`; `ok: false`, naming the limit, for a mode wider than the one `keen stdio` was started with (`--permission-mode`, else the user config's `permissionMode`; with neither, any mode) or than the project's config allows",
  "new-session": "at once, `data` `{ session_id, cwd }`; the session is stored at its first prompt; `ok: false` while a turn runs",
  "resume-session": "after the replay, `data` `{ session_id, cwd, model, title }`; `ok: false` for no such session or while a turn runs",
  "list-sessions": "`data`: sessions, newest first",
  "list-models": "`data`: `[{ model, provider, available, current }]` for the configured providers; `current` marks the session's model now (after `set-model`, the one it chose)",
  "list-files": "`data` `{ paths, truncated }`: paths relative to the session's directory (directories end in `/`), best match first: path prefix, then file-name prefix, then substring, shorter first. Gitignored paths, `.git`, and every path the filesystem guard refuses to read (secret names such as `.env` and `id_rsa`, credential directories, links to them) are left out. The walk is reused for a few seconds and bounded in size (`truncated` when it stopped early, as when more than `limit` matched). `ok: false` when the session cannot be set up (e.g. no provider configured)",
  "list-commands": "`data`: `[{ name, description, argument_hint?, model?, allowed_tools?, source, file }]`, sorted by name: the markdown commands of `<config>/commands/`, `.claude/commands/` and `.keen/commands/` (a later one replaces an earlier one of the same name), read again on each call. `ok: false` when the session cannot be set up or its runner has no custom commands (the CLI runner)",
  "list-skills": "`data` `{ skills: [{ name, description, path, source }], skipped: [{ path, source, reason }] }`: the skill folders (`path`, absolute) holding a `SKILL.md` in `~/.agents/skills/`, `~/.claude/skills/`, `<config>/skills/` (`source` `user`), then the workspace's `.agents/skills/`, `.claude/skills/` and `.keen/skills/` (`project`); a later one replaces an earlier one of the same name; `skipped`: folders whose SKILL.md is unusable, and why. Read again on each call. `ok: false` when the session cannot be set up or its runner has no skills (the CLI runner)",
  shutdown: "after every command sent before it, the running turn and queued prompts (send `interrupt` first to stop sooner); then the process exits 0",
  undo: "`data` `{ files: [{ path, action: \"restore\" | \"remove\" }], restored, to? }`: without `confirm` only what would change; with it, the file writes and edits of the latest turn whose changes are still in place are reverted from the contents Keen stored (through the filesystem guard) and stored as a `rewind` event with `conversation: false` (`to`: that turn's prompt), so each further `undo` goes one turn further back. `ok: false`, nothing changed, when a file changed since the turn, when a change was too large to keep its contents (128 KiB), or while a turn runs",
  shell: "when the command has ended: `data` `{ session_id, exit_code, is_error }` (a failing command is still `ok`: its exit code says how it ended); `ok: false` for an empty command, while a turn runs, or when another process holds the session",
  "list-checkpoints": "at once, `data` `{ session_id, checkpoints: [{ index, text, ts, files }] }` in prompt order: each prompt of the session's current (rewound) history, as typed, and the workspace paths that turn or later ones changed through Keen's tools; empty for a session with no turn yet",
  rewind: "once rewound, `data` `{ session_id, to, text, files: [{ path, action: \"restored\" \| \"deleted\" }] }` (`text`: the prompt rewound to, to edit and send again); a `rewind` event is stored and emitted first. `ok: false` and nothing changed: `nothing_to_rewind` (no prompt, or neither `files` nor `conversation`), `unknown_checkpoint` (no prompt `to`), `file_changed` (a file changed outside Keen since; `data` `{ paths }`), `rewind_refused` (a change too large to keep, or files cannot be restored in this session), `busy` (a turn runs), `session_busy`",
  "fork-session": "after the replay, `data` `{ session_id, parent, at, text? }`: the new session (now the engine's), its parent's id, the prompt it was forked before (`at`; the parent's prompt count + 1 for all of it) and that prompt's text (for the input). `ok: false` for no such session (`unknown_session`), no prompt `at` (`unknown_checkpoint`) or while a turn runs (`busy`)",
  "kill-job": "at once, without waiting for earlier commands or the running turn; once the job has ended (within about 2 s: SIGTERM, then SIGKILL to its process group), after its `job` event with `state` `killed`: `data` `{ job_id, state, exit_code }`. `ok: false`: `unknown_job` (no job of this engine has that id), `job_ended` (it had already exited or been killed; `data` `{ job_id, state, exit_code }`)",
  compact: "when the compaction has ended: `data` `{ session_id, tokens_before, tokens_after }`; `ok: false` while a turn runs, before the session's first turn, when another process holds the session (busy), or when the compaction failed (the session is then unchanged)",
};

/** The JSON Schema published for clients (`keen protocol schema --commands`). */
export function commandJsonSchema(): Record<string, unknown> {
  return {
    $id: "https://keen.dev/schema/commands-v1.json",
    title: "Keen two-way protocol, one command line",
    ...publishable(z.toJSONSchema(CommandSchema)),
  };
}
