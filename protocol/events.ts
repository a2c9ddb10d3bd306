import * as z from "zod";
import { CommandIdSchema, permissionModeSchema } from "./commands.js";
import { MessageSchema } from "./messages.js";
import { RunResultSchema } from "./result.js";
import { ErrorCodeSchema, RewoundFileSchema } from "./responses.js";

const base = {
  conversation_id: z.string(), ts: z.number(),
  /** Set on stored events the engine re-emits when a front end resumes a session (history, not live). */
  replay: z.boolean().optional(),
};
/**
 * On the events a subagent emits (the child loop of a `task` call): the id of that `task` call in the parent's
 * turn. Its streaming deltas and retries are not emitted; its complete entries, tool calls and permission
 * requests are, with this field, so a client nests them under the call and keeps them out of the main answer.
 */
const nested = { parent_tool_call_id: z.string().optional() };
const assistant = { ...base, ...nested, role: z.literal("assistant") };

/**
 * What a tool does, declared by the tool itself: UIs pick icons and wording by it, the
 * permission gate and undo decide by it. `read` and `search` only look; `edit` changes files
 * through Keen (undo can restore them); `exec` runs commands; `network` reaches other hosts;
 * `other`: anything else (an MCP tool without readOnlyHint), treated as the riskiest.
 */
export const ToolKindSchema = z.enum(["read", "search", "edit", "exec", "network", "other"]);
export type ToolKind = z.infer<typeof ToolKindSchema>;
/** A file a call touches (absolute), and the line when it is one place in it. */
export const ToolLocationSchema = z.object({ path: z.string(), line: z.number().int().optional() });
export type ToolLocation = z.infer<typeof ToolLocationSchema>;
/** How one call describes itself, as `tool-use` and `permission-request` carry it. */
export interface CallView {
  tool_kind: ToolKind;
  mutates: boolean;
  title: string;
  locations: ToolLocation[];
}
/** The same, on the events (optional: older sessions and unknown tools lack them). */
const callView = {
  tool_kind: ToolKindSchema.optional(),
  /** The call may change something (files, processes, other hosts); false only for reads and searches. */
  mutates: z.boolean().optional(),
  /** One line for a human: `Read src/a.ts`, the command of an exec call. */
  title: z.string().optional(),
  locations: z.array(ToolLocationSchema).optional(),
};
/** Deltas carry the attempt that produced them: a `retry` line voids earlier attempts' deltas. */
const delta = { ...assistant, attempt: z.number().int() };

/** First line of a stream: who is speaking, where, with which tools. */
export const SessionStartEvent = z.object({
  kind: z.literal("session-start"), ...base,
  model: z.string(), cwd: z.string(), tools: z.array(z.string()), protocol_version: z.number().int(),
  resumed: z.boolean(),
  /** The engine's permission mode for this session (absent in one-shot runs before version 1.1). */
  permission_mode: permissionModeSchema().optional(),
  /** True when turns of this front end are headless (keen run, keen stdio); false for the TUI and ACP. */
  headless: z.boolean().optional(),
  /** True when bash runs in the OS sandbox (README "Sandbox"); absent for the CLI runner, whose tools are its own. */
  sandboxed: z.boolean().optional(),
  /** Why bash runs unconfined although the sandbox mode is auto (its dependencies are missing), and how to fix it. */
  sandbox_fallback: z.string().optional(),
});
/** A complete text block: the user's prompt (role user) or visible assistant text. */
export const TextEvent = z.object({
  kind: z.literal("text"), ...base, ...nested, role: z.enum(["user", "assistant"]), content: z.string(),
  /** The block was cut by an interrupt: `content` is what had streamed (its deltas) when the turn stopped. */
  interrupted: z.literal(true).optional(),
});
/** A complete thinking block. */
export const ThinkingEvent = z.object({ kind: z.literal("thinking"), ...assistant, content: z.string() });
/** The model called a tool; `input` is the tool input as a JSON string. */
export const ToolUseEvent = z.object({
  kind: z.literal("tool-use"), ...assistant, tool_name: z.string(), tool_call_id: z.string(), input: z.string(), ...callView,
});
/** A tool finished; `result` is what the model sees, `details` what UIs show (e.g. a diff). */
export const ToolResultEvent = z.object({
  kind: z.literal("tool-result"), ...assistant, tool_name: z.string(), tool_call_id: z.string(),
  result: z.string(), is_error: z.boolean(), details: z.record(z.string(), z.unknown()).optional(),
  /** The run was interrupted before or while this call ran (it did not fail on its own). */
  interrupted: z.literal(true).optional(),
  /**
   * The tool never started: the call was refused (denied, a hook, read-only mode, the final step), interrupted
   * before it began, or invalid or unknown; `result` is Keen's reason. UIs say so rather than count it as output.
   */
  not_run: z.literal(true).optional(),
  /**
   * How long the tool ran, from its `tool-start` (after any permission wait) to this result; absent when it never
   * started. Stored, unlike `tool-start`, so a resumed session shows the same time as the live one did.
   */
  duration_ms: z.number().int().nonnegative().optional(),
});
/** The inner text of the turn's `<keen_memory>` block, hidden from visible text. */
export const MemoryEvent = z.object({ kind: z.literal("memory"), ...assistant, content: z.string() });
/** A failed attempt will be retried: discard every delta with `attempt` below the next one. */
export const RetryEvent = z.object({
  kind: z.literal("retry"), ...assistant, attempt: z.number().int(), reason: z.string(), delay_ms: z.number().int(),
  /** Which retry of this step this is (1 = the first), and how many the policy allows: for "retry 2/4". */
  retry: z.number().int().optional(), max_retries: z.number().int().optional(),
});
/** An error the run reports (provider failure, timeout, ...). */
export const ErrorEvent = z.object({
  kind: z.literal("error"), ...base, ...nested, message: z.string(), error_code: ErrorCodeSchema.optional().describe("what failed: see docs/PROTOCOL.md, error codes"),
});
/** Last line: the run result. */
export const ResultEvent = RunResultSchema.extend({ kind: z.literal("result"), ...base });

/** Streaming piece of assistant text. */
export const TextDeltaEvent = z.object({ kind: z.literal("text-delta"), ...delta, delta: z.string() });
/** A thinking block begins. */
export const ThinkingStartEvent = z.object({ kind: z.literal("thinking-start"), ...delta });
/** Streaming piece of thinking. */
export const ThinkingDeltaEvent = z.object({ kind: z.literal("thinking-delta"), ...delta, delta: z.string() });
/** A thinking block ends. */
export const ThinkingEndEvent = z.object({ kind: z.literal("thinking-end"), ...delta });
/** A text block ends. */
export const ContentEndEvent = z.object({ kind: z.literal("content-end"), ...delta });
/** Progress of a running tool: a bounded tail of its output and the total size so far. */
export const ToolUpdateEvent = z.object({
  kind: z.literal("tool-update"), ...assistant, tool_name: z.string(), tool_call_id: z.string(),
  tail: z.string(), total_bytes: z.number().int(),
});

/** The user's own command (`shell` command) began; `shell_id` names it in its updates and its `shell` event. */
export const ShellStartEvent = z.object({ kind: z.literal("shell-start"), ...base, role: z.literal("user"), shell_id: z.string(), command: z.string() });
/** Progress of the user's command: a bounded tail of its output and the total size so far (as `tool-update`). */
export const ShellUpdateEvent = z.object({
  kind: z.literal("shell-update"), ...base, role: z.literal("user"), shell_id: z.string(), tail: z.string(), total_bytes: z.number().int(),
});
/**
 * The user's own command ended: `output` as bash gives it to a model (truncated like a bash result). Stored; the
 * model gets the command and output as context at the start of the session's next prompt.
 */
export const ShellEvent = z.object({
  kind: z.literal("shell"), ...base, role: z.literal("user"), shell_id: z.string(), command: z.string(), output: z.string(),
  exit_code: z.number().int().nullable(), is_error: z.boolean(), duration_ms: z.number().int().nonnegative(),
});

/** A tool call waits for the user: answer with a `permission-response` command carrying `request_id`. */
export const PermissionRequestEvent = z.object({
  kind: z.literal("permission-request"), ...assistant, request_id: z.string(), tool_name: z.string(), tool_call_id: z.string(), ...callView,
  /** The tool input as a JSON string, as in `tool-use`. */
  input: z.string(),
  /** For writes and edits: the unified diff the change would make. */
  diff: z.string().optional(),
  /** The file a write or edit would change. */
  path: z.string().optional(),
  /** For writes and edits whose texts are small enough (128 KiB together): the whole text now (null: a new file) and after. */
  old_text: z.string().nullable().optional(),
  new_text: z.string().optional(),
});
/** A tool actually began to run (after any permission answer): front ends start spinners and clocks here. */
export const ToolStartEvent = z.object({
  kind: z.literal("tool-start"), ...assistant, tool_name: z.string(), tool_call_id: z.string(),
});
/**
 * The engine's answer to one command: `id` echoes the command's id as given (string or number); `data` when `ok`
 * (its shape per command: protocol/responses.ts, `$defs` `response-data.<command>` in the schema); `error` (text for
 * people) and `error_code` (for programs) when not.
 */
export const ResponseEvent = z.object({
  kind: z.literal("response"), ...base, id: CommandIdSchema.optional(), command: z.string(), ok: z.boolean(),
  error: z.string().optional(), error_code: ErrorCodeSchema.optional().describe("set whenever `ok` is false"), data: z.unknown().optional(),
});

/**
 * Context compaction: `start` before the summary request, `end` after it. On
 * `end`, `tokens_after` is set when the conversation was replaced and `error`
 * when the compaction failed (the conversation stays as it was).
 */
export const CompactionEvent = z.object({
  kind: z.literal("compaction"), ...base, phase: z.enum(["start", "end"]),
  trigger: z.enum(["auto", "manual", "overflow"]),
  /** Estimated tokens of the conversation before compaction. */
  tokens_before: z.number().int(),
  /** Estimated tokens of the conversation that replaces it. */
  tokens_after: z.number().int().optional(),
  error: z.string().optional(),
});

/**
 * An MCP server's news: it connected (with its tools), failed to start or was
 * not started (`untrusted`: a project's `.mcp.json` the user has not trusted),
 * went away (`disconnected`: the next call reconnects once), or changed its
 * tool list; `warning` is a configuration problem (an unreadable `.mcp.json`, an
 * `mcp__` name in `--allowed-tools` no server offers; `server` may be empty).
 * `tools` is the server's tools as the model is offered them now.
 */
export const McpServerEvent = z.object({
  kind: z.literal("mcp-server"), ...base, server: z.string(),
  status: z.enum(["connected", "failed", "untrusted", "disconnected", "tools-changed", "warning"]),
  tools: z.array(z.string()),
  /** For people: why it failed, what to do. */
  message: z.string().optional(),
});

/** One item of the model's plan (`todo_write`). */
export const PlanEntrySchema = z.object({
  content: z.string(), status: z.enum(["pending", "in_progress", "completed"]),
  priority: z.enum(["high", "medium", "low"]).optional(),
});
export type PlanEntry = z.infer<typeof PlanEntrySchema>;
/** The model replaced its plan (a `todo_write` call): `entries` is the whole plan now, in order; empty when cleared. */
export const PlanUpdateEvent = z.object({
  kind: z.literal("plan-update"), ...assistant, tool_call_id: z.string(), entries: z.array(PlanEntrySchema),
});

/** The model loaded an Agent Skill (the `skill` tool): its name and folder. */
export const SkillLoadedEvent = z.object({
  kind: z.literal("skill-loaded"), ...assistant, tool_call_id: z.string(), name: z.string(), path: z.string(),
});

/**
 * A configured hook ran (docs/extensions.md "Hooks"): which hook `event` and `matcher`, the
 * `command` (redacted like every event), how it ended (`blocked`: exit 2, or its answer
 * denied or blocked), what it decided, and the reason or error for people.
 */
export const HookEvent = z.object({
  kind: z.literal("hook"), ...base,
  hook_event: z.enum(["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "PreCompact", "Notification"]),
  matcher: z.string(), command: z.string(),
  /** Where it is configured: `user` (your config) or `project` (.keen/config.json, .claude/settings*.json). */
  source: z.enum(["user", "project"]),
  outcome: z.enum(["ok", "blocked", "error", "timeout"]),
  duration_ms: z.number().int(),
  /** What its answer decided: PreToolUse `allow`, `deny` or `ask`; `block` (exit 2 or `decision: "block"`); `stop` (`continue: false`). */
  decision: z.enum(["allow", "deny", "ask", "block", "stop"]).optional(),
  /** The call it was about (PreToolUse, PostToolUse). */
  tool_name: z.string().optional(), tool_call_id: z.string().optional(),
  /** PreToolUse rewrote the call's input (`updatedInput`). */
  updated_input: z.boolean().optional(),
  exit_code: z.number().int().nullable().optional(),
  /** The reason it gave (stderr on exit 2, `reason`, `permissionDecisionReason`), or what went wrong. */
  message: z.string().optional(),
});

/**
 * The session went back to just before prompt `to` (1-based in its history as it was): with `conversation`, that
 * prompt and the later turns left the model's history (a client drops them from its transcript: count the `text`
 * events of role user); `files` lists the files put back. Stored; the rewound turns stay in the log, but a replay
 * (resume, `sessions show`) leaves them out. `undo` stores one with `conversation: false`.
 */
export const RewindEvent = z.object({
  kind: z.literal("rewind"), ...base, to: z.number().int(), text: z.string().describe("the prompt rewound to"),
  conversation: z.boolean(), files: z.array(RewoundFileSchema),
});

/**
 * A background job (bash with `background: true`) started or ended: `state` is `running` at
 * its start, then `exited` (on its own, with `exit_code`) or `killed` (job_kill, a `kill-job` command, or the session
 * ending). Its output is not here: the model reads it with job_output, whose results carry it.
 */
export const JobEvent = z.object({
  kind: z.literal("job"), ...base, job_id: z.string(), command: z.string(), state: z.enum(["running", "exited", "killed"]),
  pid: z.number().int().optional(), exit_code: z.number().int().nullable(), started_at: z.number(), ended_at: z.number().optional(),
});

/** Every event a JSONL consumer can see. */
export const PublicEventSchema = z.discriminatedUnion("kind", [
  SessionStartEvent, TextEvent, ThinkingEvent, ToolUseEvent, ToolResultEvent, MemoryEvent, RetryEvent,
  ErrorEvent, ResultEvent, TextDeltaEvent, ThinkingStartEvent, ThinkingDeltaEvent, ThinkingEndEvent,
  ContentEndEvent, ToolUpdateEvent, PermissionRequestEvent, ToolStartEvent, ResponseEvent, CompactionEvent, McpServerEvent,
  ShellStartEvent, ShellUpdateEvent, ShellEvent,
  PlanUpdateEvent,
  SkillLoadedEvent,
  HookEvent,
  RewindEvent,
  JobEvent,
]);
export type PublicEvent = z.infer<typeof PublicEventSchema>;

/** A user message as stored (raw, with its headless flag). Internal. */
export const UserMessageEvent = z.object({ kind: z.literal("user-message"), ...base, ...nested, turn_id: z.string(), message: MessageSchema });
/** The raw assistant message of one step (memory block, thinking signatures, tool calls). Internal. */
export const AssistantMessageEvent = z.object({
  kind: z.literal("assistant-message"), ...base, ...nested, turn_id: z.string(), message: MessageSchema,
  /** The provider's stop reason for this step. */
  stop_reason: z.string().optional(),
});
/** A turn ended; status says how. Internal. */
export const TurnEndEvent = z.object({
  kind: z.literal("turn-end"), ...base, ...nested, turn_id: z.string(),
  status: z.enum(["success", "error", "interrupted", "max_turns"]), steps: z.number().int(),
  /** The provider's stop reason of the turn's last step (end_turn, max_tokens, refusal, tool_use, ...). */
  stop_reason: z.string().optional(),
  /** Set when the CLI runner ran the turn: a session remembers its runner. */
  runner: z.literal("cli").optional(),
  /** The external CLI's own session id, resumed by the session's next CLI turn. */
  cli_session_id: z.string().optional(),
});
/** A prompt added to one outgoing request only (max-turns); kept for audit, never replayed. Internal. */
export const PromptInjectionEvent = z.object({
  kind: z.literal("prompt-injection"), ...base, ...nested, turn_id: z.string(), step: z.number().int(), name: z.string(), text: z.string(),
});

/** A standing permission answer (`allow-always`, `deny-always`) for one tool; stored so it holds after resume. Internal. */
export const PermissionRuleEvent = z.object({
  kind: z.literal("permission-rule"), ...base, tool_name: z.string(), decision: z.enum(["allow", "deny"]),
});

/**
 * A compaction's result: from here on, the conversation before this event is
 * `messages` (the summary and the recent messages kept verbatim). `turn_id` is
 * the turn it happened in (absent for a manual compaction between turns):
 * that turn's later steps follow `messages`. Internal.
 */
export const ContextReplacementEvent = z.object({
  kind: z.literal("context-replacement"), ...base, turn_id: z.string().optional(),
  trigger: z.enum(["auto", "manual", "overflow"]), messages: z.array(MessageSchema),
});

/** Events the loop emits for storage and in-process use; never printed. */
export const InternalEventSchema = z.discriminatedUnion("kind", [
  UserMessageEvent, AssistantMessageEvent, TurnEndEvent, PromptInjectionEvent, PermissionRuleEvent, ContextReplacementEvent,
]);
export type InternalEvent = z.infer<typeof InternalEventSchema>;

/** Everything on the bus. */
export type KeenEvent = PublicEvent | InternalEvent;
export type EventOf<K extends KeenEvent["kind"]> = Extract<KeenEvent, { kind: K }>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event before the emitter stamps `conversation_id` and `ts`. */
export type EventDraft = DistributiveOmit<KeenEvent, "conversation_id" | "ts">;
