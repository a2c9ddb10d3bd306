import * as z from "zod";

/*
 * Commands: the only way into a session engine. Every front end (keen run,
 * keen stdio, the TUI, ACP) parses its input into these and renders events.
 * Any command may carry an `id`; the engine answers each with exactly one
 * `response` event echoing it.
 */

const id = { id: z.string().optional() };

/** Permission modes, from most to least trusting: see docs/PROTOCOL.md "Permissions". */
export const PermissionModeSchema = z.enum(["auto", "accept-edits", "ask", "read-only"]);
export type PermissionMode = z.infer<typeof PermissionModeSchema>;

/** Send a prompt; one sent during a turn runs after it (queued). */
export const PromptCommand = z.object({ kind: z.literal("prompt"), ...id, text: z.string() });
/** End the running turn as `interrupted` (and drop queued prompts). */
export const InterruptCommand = z.object({ kind: z.literal("interrupt"), ...id });
/** Answer a `permission-request`; `message` reaches the model with a denial. */
export const PermissionResponseCommand = z.object({
  kind: z.literal("permission-response"), ...id, request_id: z.string(),
  decision: z.enum(["allow-once", "allow-always", "deny", "deny-always"]), message: z.string().optional(),
});
/** Use another model (`provider/model`) from the next turn on. */
export const SetModelCommand = z.object({ kind: z.literal("set-model"), ...id, model: z.string() });
/** Change the permission mode (never wider than the user's config and flags allow). */
export const SetPermissionModeCommand = z.object({ kind: z.literal("set-permission-mode"), ...id, mode: PermissionModeSchema });
/** Start a fresh session (in `cwd`, default the engine's); it is created at its first prompt. */
export const NewSessionCommand = z.object({ kind: z.literal("new-session"), ...id, cwd: z.string().optional() });
/**
 * Continue a stored session by id or unique prefix; `replay` re-emits its history (events with `replay: true`);
 * `cwd` moves it to another directory from its next turn on (remembered, like `keen run --session --cwd`).
 */
export const ResumeSessionCommand = z.object({
  kind: z.literal("resume-session"), ...id, session: z.string(), replay: z.boolean().optional(), cwd: z.string().optional(),
});
/** Stored sessions, newest first, optionally only those of one working directory. */
export const ListSessionsCommand = z.object({ kind: z.literal("list-sessions"), ...id, cwd: z.string().optional() });
/** Models of the configured providers (`data`: `[{ model, provider, current, available }]`). */
export const ListModelsCommand = z.object({ kind: z.literal("list-models"), ...id });
/**
 * Revert the file writes and edits of the session's last turn from the contents Keen kept. Without `confirm`
 * the response only says what would be restored or removed; a file changed since the turn refuses the whole undo.
 */
export const UndoCommand = z.object({ kind: z.literal("undo"), ...id, confirm: z.boolean().optional() });
/** End the engine once the running turn and queued prompts have finished (send `interrupt` first to stop sooner). */
export const ShutdownCommand = z.object({ kind: z.literal("shutdown"), ...id });

/** Compact the idle session's conversation now; `instructions` steer the summary. */
export const CompactCommand = z.object({ kind: z.literal("compact"), ...id, instructions: z.string().optional() });

/** Every command a front end can send. */
export const CommandSchema = z.discriminatedUnion("kind", [
  PromptCommand, InterruptCommand, PermissionResponseCommand, SetModelCommand, SetPermissionModeCommand,
  NewSessionCommand, ResumeSessionCommand, ListSessionsCommand, ListModelsCommand, ShutdownCommand, UndoCommand, CompactCommand,
]);
export type Command = z.infer<typeof CommandSchema>;
export type CommandOf<K extends Command["kind"]> = Extract<Command, { kind: K }>;

/** The JSON Schema published for clients (`keen protocol schema --commands`). */
export function commandJsonSchema(): Record<string, unknown> {
  return {
    $id: "https://keen.dev/schema/commands-v1.json",
    title: "Keen two-way protocol, one command line",
    ...z.toJSONSchema(CommandSchema),
  };
}
