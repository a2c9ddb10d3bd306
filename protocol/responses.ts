import * as z from "zod";
import { permissionModeSchema, type Command, type CommandId } from "./commands.js";
import { ERROR_CODES, type ErrorCode } from "./errors.js";

/*
 * Typed answers: what each command's `response` carries in `data` when `ok`,
 * and the `error_code` a failed `response` (and an `error` event) carries
 * beside its human `error` text. Clients branch on the code, never on the text.
 */

export { CodedError, ERROR_CODES, errorCodeOf, type ErrorCode } from "./errors.js";
/** ERROR_CODES (protocol/errors.ts) as a schema. */
export const ErrorCodeSchema = z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]);

/** A session as `list-sessions` lists it. */
export const SessionRowSchema = z.object({
  id: z.string(), title: z.string(), cwd: z.string(), model: z.string().describe("`provider/model`"),
  created: z.number().describe("ms since the epoch"), updated: z.number(),
  status: z.enum(["running", "success", "error", "interrupted", "max_turns"]).describe("`running`, or how its last turn ended"),
  parent: z.object({ id: z.string(), at: z.number().int() }).optional().describe("a fork: the session and prompt it was forked from"),
});

/** A file a rewind put back: `restored` to its earlier text, or `deleted` because it did not exist then. */
export const RewoundFileSchema = z.object({ path: z.string(), action: z.enum(["restored", "deleted"]) });

/** What `data` holds in an `ok` response, per command (none: no `data`). */
export const RESPONSE_DATA = {
  prompt: z.object({ session_id: z.string(), status: z.enum(["success", "error", "interrupted", "max_turns"]) }),
  interrupt: z.object({ interrupted: z.boolean().describe("a turn was running") }),
  "permission-response": z.undefined(),
  "set-model": z.object({ model: z.string().describe("normalised `provider/model`") }),
  "set-permission-mode": z.object({ mode: permissionModeSchema() }),
  "new-session": z.object({ session_id: z.string(), cwd: z.string() }),
  "resume-session": z.object({ session_id: z.string(), cwd: z.string(), model: z.string(), title: z.string() }),
  "list-sessions": z.array(SessionRowSchema),
  "list-models": z.array(z.object({ model: z.string(), provider: z.string(), available: z.boolean(), current: z.boolean() })),
  "list-files": z.object({
    paths: z.array(z.string()).describe("relative to the session's directory; directories end in `/`"),
    truncated: z.boolean().describe("more matched than `limit`, or the walk stopped at its cap"),
  }),
  "list-commands": z.array(z.object({
    name: z.string().describe("typed as `/name`; `sub:name` for `sub/name.md`"), description: z.string(),
    argument_hint: z.string().optional(), model: z.string().optional().describe("the model its turn uses"),
    allowed_tools: z.array(z.string()).optional().describe("its turn keeps only these of the session's tools"),
    source: z.enum(["user", "claude", "project"]).describe("`<config>/commands/`, `.claude/commands/` or `.keen/commands/`"),
    file: z.string().describe("relative to the workspace root (absolute for the user's)"),
  })),
  "list-skills": z.object({
    skills: z.array(z.object({
      name: z.string(), description: z.string(), path: z.string().describe("the skill's folder, absolute"),
      source: z.enum(["user", "project"]).describe("your home or config directory, or the workspace"),
    })),
    skipped: z.array(z.object({ path: z.string(), source: z.enum(["user", "project"]), reason: z.string() })),
  }),
  shutdown: z.undefined(),
  undo: z.object({
    files: z.array(z.object({ path: z.string(), action: z.enum(["restore", "remove"]) })),
    restored: z.boolean().describe("false: only what would change"),
    to: z.number().int().optional().describe("the prompt whose turn's changes were (or would be) reverted"),
  }),
  "list-checkpoints": z.object({
    session_id: z.string(),
    checkpoints: z.array(z.object({
      index: z.number().int().describe("1-based prompt number in the session's current (rewound) history"),
      text: z.string().describe("the prompt as the user typed it"),
      ts: z.number().describe("when it was sent, ms since the epoch"),
      files: z.array(z.string()).describe("workspace paths that turn or later ones changed through Keen's tools (still in place)"),
    })),
  }),
  rewind: z.object({
    session_id: z.string(), to: z.number().int(), text: z.string().describe("the prompt rewound to, for the input box"),
    files: z.array(RewoundFileSchema),
  }),
  "fork-session": z.object({
    session_id: z.string().describe("the new session"), parent: z.string(), at: z.number().int(),
    text: z.string().optional().describe("the prompt at `at`, for the input box (absent when the whole history was copied)"),
  }),
  "kill-job": z.object({
    job_id: z.string(), state: z.literal("killed"),
    exit_code: z.number().int().nullable().describe("null: ended by a signal; sandboxed, bubblewrap's 143 (128 + SIGTERM)"),
  }),
  compact: z.object({ session_id: z.string(), tokens_before: z.number(), tokens_after: z.number() }),
  shell: z.object({
    session_id: z.string(), exit_code: z.number().int().nullable().describe("null: killed (interrupt, timeout)"),
    is_error: z.boolean().describe("did not run, or ended with a non-zero exit code"),
  }),
} satisfies Record<Command["kind"], z.ZodType>;

export type ResponseData<K extends Command["kind"]> = z.infer<(typeof RESPONSE_DATA)[K]>;

/** The response to a command of kind `K`: its `data` when `ok`; `error` and `error_code` when not. */
export type ResponseTo<K extends Command["kind"]> = { kind: "response"; command: K; id?: CommandId; conversation_id: string; ts: number } & (
  | { ok: true; data: ResponseData<K>; error?: undefined; error_code?: undefined }
  | { ok: false; error: string; error_code: ErrorCode; data?: unknown }
);

/** JSON Schema `$defs` for the per-command `data` shapes, as `keen protocol schema` publishes them. */
export function responseDataDefs(): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  for (const [kind, schema] of Object.entries(RESPONSE_DATA)) {
    if (schema instanceof z.ZodUndefined) continue;
    const { $schema: _, ...json } = z.toJSONSchema(schema) as Record<string, unknown>;
    defs[`response-data.${kind}`] = { ...json, description: `\`data\` of an ok \`response\` to \`${kind}\`` };
  }
  return defs;
}
