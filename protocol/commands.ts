import * as z from "zod";
import { publishable } from "./json-schema.js";

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

/**
 * The permission modes, ordered from the widest (most trusting) to the
 * narrowest: the one order every comparison uses (a project config, or the
 * mode `keen stdio` was started with, only lets a mode move right). What each
 * mode lets run is app/permissions/policy.ts's `gate`; docs/PROTOCOL.md's
 * table is generated from it.
 */
export const PERMISSION_MODES = ["auto", "accept-edits", "ask", "read-only"] as const;
export const PermissionModeSchema = z.enum(PERMISSION_MODES);
export type PermissionMode = z.infer<typeof PermissionModeSchema>;

/** True when mode `a` lets more run than `b`. */
export function isWiderMode(a: PermissionMode, b: PermissionMode): boolean {
  return PERMISSION_MODES.indexOf(a) < PERMISSION_MODES.indexOf(b);
}

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
    ...publishable(z.toJSONSchema(CommandSchema)),
  };
}
