import type { Command } from "../../protocol/commands.js";
import type { EngineClient } from "../../protocol/client.js";
import type { CallView, EventDraft, KeenEvent } from "../../protocol/events.js";
import type { ErrorCode } from "../../protocol/responses.js";

/** What the real engine answers where a command's answer always has data (list-models: the session's model). */
const DEFAULT_ANSWERS: Partial<Record<Command["kind"], FakeAnswer>> = {
  "list-models": { ok: true, data: [{ model: "anthropic/claude-test", provider: "anthropic", available: true, current: true }] },
  "list-files": { ok: true, data: { paths: [], truncated: false } },
  "list-commands": { ok: true, data: [] },
};

/** Answers for the commands a front end sends: `data` for list commands, or an error. */
export type FakeAnswer = { ok: true; data?: unknown } | { ok: false; error: string; error_code?: ErrorCode; data?: unknown };
/** A fixed answer, or one computed from the command (e.g. `list-files` matching its query). */
export type FakeAnswerOf = FakeAnswer | ((command: Command) => FakeAnswer);

/**
 * A scripted EngineClient for front-end tests: records every command,
 * answers each with a `response` (from `answers`, else ok), and lets the
 * test emit any event. `onCommand` lets a test script a reaction (a turn).
 */
export class FakeEngine implements EngineClient {
  readonly sent: Command[] = [];
  private listeners = new Set<(event: KeenEvent) => void | Promise<void>>();
  private ts = Date.now();
  conversationId = "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee";
  answers: Partial<Record<Command["kind"], FakeAnswerOf>> = {};
  onCommand?: (command: Command, engine: FakeEngine) => void;
  private waiters: { kind: Command["kind"]; resolve: (command: Command) => void }[] = [];

  send(command: Command): void {
    this.sent.push(command);
    this.waiters = this.waiters.filter((w) => (w.kind === command.kind ? (w.resolve(command), false) : true));
    const given = this.answers[command.kind];
    const answer = (typeof given === "function" ? given(command) : given) ?? DEFAULT_ANSWERS[command.kind] ?? { ok: true };
    queueMicrotask(() => {
      this.emit({
        kind: "response", id: command.id, command: command.kind, ok: answer.ok,
        ...(answer.ok ? { data: answer.data } : { error: answer.error, error_code: answer.error_code ?? "failed", ...(answer.data !== undefined ? { data: answer.data } : {}) }),
      });
      this.onCommand?.(command, this);
    });
  }

  subscribe(listener: (event: KeenEvent) => void | Promise<void>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Emits one event, stamped like the bus does. */
  emit(draft: EventDraft): KeenEvent {
    const event = { ...draft, conversation_id: this.conversationId, ts: this.ts++ } as KeenEvent;
    for (const l of this.listeners) void l(event);
    return event;
  }

  /** Moves the fake clock on: the next event is stamped `ms` later (durations shown from event times). */
  advance(ms: number): void {
    this.ts += ms;
  }

  /** The next command of one kind the front end sends (not one sent before the call). */
  nextCommand<K extends Command["kind"]>(kind: K): Promise<Extract<Command, { kind: K }>> {
    return new Promise((resolve) => this.waiters.push({ kind, resolve: resolve as (command: Command) => void }));
  }

  /** Commands of one kind sent so far. */
  commands<K extends Command["kind"]>(kind: K): Extract<Command, { kind: K }>[] {
    return this.sent.filter((c): c is Extract<Command, { kind: K }> => c.kind === kind);
  }
}

/** Event drafts for tests, with the boilerplate filled in. */
export const draft = {
  sessionStart: (over: Partial<Extract<EventDraft, { kind: "session-start" }>> = {}): EventDraft => ({
    kind: "session-start", model: "anthropic/claude-test", cwd: "/work/proj", tools: ["bash", "edit_file"], protocol_version: 1,
    resumed: false, permission_mode: "ask", headless: false, ...over,
  }),
  user: (content: string): EventDraft => ({ kind: "text", role: "user", content }),
  text: (content: string): EventDraft => ({ kind: "text", role: "assistant", content }),
  thinking: (content: string): EventDraft => ({ kind: "thinking", role: "assistant", content }),
  delta: (delta: string, attempt = 1): EventDraft => ({ kind: "text-delta", role: "assistant", attempt, delta }),
  contentEnd: (attempt = 1): EventDraft => ({ kind: "content-end", role: "assistant", attempt }),
  thinkingStart: (attempt = 1): EventDraft => ({ kind: "thinking-start", role: "assistant", attempt }),
  thinkingDelta: (delta: string, attempt = 1): EventDraft => ({ kind: "thinking-delta", role: "assistant", attempt, delta }),
  thinkingEnd: (attempt = 1): EventDraft => ({ kind: "thinking-end", role: "assistant", attempt }),
  /** `view`: how the call describes itself (its tool's kind and title), as the engine's tool-use carries it. */
  toolUse: (id: string, name: string, input: unknown, view?: Partial<CallView>): EventDraft => ({
    kind: "tool-use", role: "assistant", tool_name: name, tool_call_id: id, input: JSON.stringify(input), ...view,
  }),
  toolStart: (id: string, name: string): EventDraft => ({ kind: "tool-start", role: "assistant", tool_name: name, tool_call_id: id }),
  toolUpdate: (id: string, name: string, tail: string): EventDraft => ({ kind: "tool-update", role: "assistant", tool_name: name, tool_call_id: id, tail, total_bytes: tail.length }),
  toolResult: (id: string, name: string, result: string, isError = false, details?: Record<string, unknown>): EventDraft => ({
    kind: "tool-result", role: "assistant", tool_name: name, tool_call_id: id, result, is_error: isError, ...(details && { details }),
  }),
  permission: (requestId: string, id: string, name: string, input: unknown, diff?: string, path?: string, view?: Partial<CallView>): EventDraft => ({
    kind: "permission-request", role: "assistant", request_id: requestId, tool_name: name, tool_call_id: id, input: JSON.stringify(input),
    ...(diff && { diff }), ...(path && { path }), ...view,
  }),
  retry: (attempt: number, delayMs: number, reason = "429 rate limited"): EventDraft => ({ kind: "retry", role: "assistant", attempt, reason, delay_ms: delayMs, retry: attempt - 1, max_retries: 4 }),
  error: (message: string): EventDraft => ({ kind: "error", message }),
  memory: (content: string): EventDraft => ({ kind: "memory", role: "assistant", content }),
  result: (over: Record<string, unknown> = {}): EventDraft => ({
    kind: "result", session_id: "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee", opencode_session_id: "0199aaaabbbb7ccc8dddeeeeeeeeeeee", text: "",
    status: "success", is_error: false, errors: [], num_turns: 1, duration_ms: 10,
    usage: { input_tokens: 1200, cached_tokens: 0, cache_write_tokens: 0, output_tokens: 80, reasoning_tokens: 0, total_tokens: 1280 },
    context: { used: 1280, window: 200000 }, ...over,
  } as EventDraft),
};
