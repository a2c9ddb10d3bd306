import type { CallView, EventDraft } from "../../protocol/events.js";
import type { Message, Usage } from "../../protocol/messages.js";
import type { Provider, ProviderRequest } from "../../protocol/provider.js";
import { addUsage, emptyUsage } from "../../protocol/usage.js";
import { MemoryFilter } from "./memory-filter.js";
import { streamWithRetry, type RetryPolicy } from "./retry.js";
import { checkToolInput, withoutInputs } from "./tool-input.js";
import type { ToolCall } from "./tool-runner.js";

/** How one step (model request, retries included) ended. */
export type StepOutcome =
  | { ok: true; message: Message; visibleText: string; toolCalls: ToolCall[]; usage: Usage; stopReason: string; lastAttempt: number }
  | {
    ok: false; error: string; partialRaw: string; aborted: boolean; overflow?: boolean;
    /** Interrupted: the visible text the cut attempt had streamed (its deltas), already emitted as `text` marked interrupted. */
    partialText?: string;
    /** Tokens the provider reported for the failed attempts (retried ones included), if it reported any. */
    usage?: Usage;
  };

/** Dependencies of a step. */
export interface StepOptions {
  provider: Provider;
  request: ProviderRequest;
  retry: RetryPolicy;
  signal: AbortSignal;
  emit: (event: EventDraft) => Promise<void>;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The attempt number of this step's first attempt: the one that ended the previous step (1 at first). */
  firstAttempt?: number;
  /** How a call describes itself (its tool's kind, title, locations) for its `tool-use` event; undefined for an unknown tool. */
  describe?: (name: string, input: unknown) => CallView | undefined;
}

/**
 * Streams one step onto the bus. Contract: never throws. Deltas are emitted
 * as they arrive, tagged with their attempt; visible text passes the memory
 * filter first. Complete entries (`thinking`, `text`, `memory`, `tool-use`)
 * are emitted only once an attempt succeeds, so a failed attempt never
 * produces one — except that an interrupt keeps what streamed: the attempt
 * it cut emits its visible text as `text` entries marked `interrupted`.
 */
export async function runStep(options: StepOptions): Promise<StepOutcome> {
  const { emit } = options;
  // Attempts are numbered across the whole turn, so a later step's deltas are never below an earlier retry's attempt.
  const base = options.firstAttempt ?? 1;
  let attempt = base;
  let state = freshState();
  let finalError = "provider stream ended without a result";
  let spent: Usage | undefined;
  let overflow = false;
  for await (const item of streamWithRetry(options.provider, options.request, options.retry, options.signal, options.sleep)) {
    if (item.type === "retry") {
      attempt = base + item.attempt - 1;
      state = freshState();
      await emit({ kind: "retry", role: "assistant", attempt, reason: item.reason, delay_ms: item.delayMs, retry: item.attempt - 1, max_retries: options.retry.maxRetries });
      continue;
    }
    const event = item.event;
    switch (event.type) {
      case "text-delta": {
        state.raw += event.text;
        const visible = state.filter.push(event.text);
        if (visible) await emitText(visible);
        break;
      }
      case "text-end": {
        const visible = state.filter.flush();
        if (visible) await emitText(visible);
        if (state.blockText) {
          await emit({ kind: "content-end", role: "assistant", attempt });
          state.texts.push(state.blockText);
          state.blockText = "";
        }
        break;
      }
      case "thinking-start":
        state.thinking = "";
        await emit({ kind: "thinking-start", role: "assistant", attempt });
        break;
      case "thinking-delta":
        state.thinking += event.text;
        await emit({ kind: "thinking-delta", role: "assistant", attempt, delta: event.text });
        break;
      case "thinking-end":
        state.thinkings.push(state.thinking);
        await emit({ kind: "thinking-end", role: "assistant", attempt });
        break;
      case "tool-call": {
        // Checked here, where model output becomes a value: past this point it is stringified, stored and sent again.
        const problem = checkToolInput(event.input);
        state.calls.push(problem
          ? { id: event.id, name: event.name, input: {}, invalid: `Invalid input for ${event.name}: ${problem}; the call was not executed.` }
          : { id: event.id, name: event.name, input: event.input });
        break;
      }
      case "done": {
        const tail = state.filter.flush();
        if (tail) {
          await emitText(tail);
          await emit({ kind: "content-end", role: "assistant", attempt });
        }
        if (state.blockText) state.texts.push(state.blockText);
        const memory = state.filter.memory();
        for (const content of state.thinkings) if (content) await emit({ kind: "thinking", role: "assistant", content });
        for (const content of state.texts) await emit({ kind: "text", role: "assistant", content });
        if (memory !== undefined) await emit({ kind: "memory", role: "assistant", content: memory });
        for (const call of state.calls) {
          const view = call.invalid ? undefined : options.describe?.(call.name, call.input);
          await emit({ kind: "tool-use", role: "assistant", tool_name: call.name, tool_call_id: call.id, input: JSON.stringify(call.input ?? {}), ...view });
        }
        // The answer keeps no whitespace that stood before a removed memory block (`text` events still equal their deltas).
        const visibleText = memory === undefined ? state.texts.join("") : state.texts.join("").trimEnd();
        const refused = new Set(state.calls.filter((call) => call.invalid).map((call) => call.id));
        return { ok: true, message: withoutInputs(event.message, refused), visibleText, toolCalls: state.calls, usage: event.usage, stopReason: event.stopReason, lastAttempt: attempt };
      }
      case "error":
        finalError = event.failure.message;
        overflow = Boolean(event.failure.overflow);
        if (event.failure.usage) spent = addUsage(spent ?? emptyUsage(), event.failure.usage);
        break;
    }
  }
  const aborted = options.signal.aborted;
  let partialText: string | undefined;
  if (aborted) {
    // What a reader saw stays said: the open block is closed, and each block becomes a complete entry (stored, replayed).
    if (state.blockText) {
      await emit({ kind: "content-end", role: "assistant", attempt });
      state.texts.push(state.blockText);
    }
    for (const content of state.texts) await emit({ kind: "text", role: "assistant", content, interrupted: true });
    partialText = state.texts.join("");
  }
  return {
    ok: false, error: finalError, partialRaw: state.raw, aborted,
    ...(overflow ? { overflow } : {}), ...(spent ? { usage: spent } : {}), ...(partialText ? { partialText } : {}),
  };

  async function emitText(visible: string) {
    state.blockText += visible;
    await emit({ kind: "text-delta", role: "assistant", attempt, delta: visible });
  }
}

function freshState() {
  return {
    filter: new MemoryFilter(),
    raw: "",
    blockText: "",
    texts: [] as string[],
    thinking: "",
    thinkings: [] as string[],
    calls: [] as ToolCall[],
  };
}
