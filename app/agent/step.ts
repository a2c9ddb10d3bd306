import type { CallView, EventDraft } from "../../protocol/events.js";
import type { Message, Usage } from "../../protocol/messages.js";
import type { Provider, ProviderRequest } from "../../protocol/provider.js";
import { addUsage, emptyUsage } from "../../protocol/usage.js";
import { streamWithRetry, type RetryPolicy } from "./retry.js";
import { createStepEmitter } from "./step-emitter.js";
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
 * Streams one step onto the bus, each attempt through a fresh step emitter
 * (step-emitter.ts). Contract: never throws. Deltas are emitted
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
  let response = createStepEmitter(emit, attempt);
  let finalError = "provider stream ended without a result";
  let spent: Usage | undefined;
  let overflow = false;
  for await (const item of streamWithRetry(options.provider, options.request, options.retry, options.signal, options.sleep)) {
    if (item.type === "retry") {
      attempt = base + item.attempt - 1;
      response = createStepEmitter(emit, attempt);
      await emit({ kind: "retry", role: "assistant", attempt, reason: item.reason, delay_ms: item.delayMs, retry: item.attempt - 1, max_retries: options.retry.maxRetries });
      continue;
    }
    const event = item.event;
    switch (event.type) {
      case "tool-call": {
        // Checked here, where model output becomes a value: past this point it is stringified, stored and sent again.
        const problem = checkToolInput(event.input);
        response.call(problem
          ? { id: event.id, name: event.name, input: {}, invalid: `Invalid input for ${event.name}: ${problem}; the call was not executed.` }
          : { id: event.id, name: event.name, input: event.input });
        break;
      }
      case "done": {
        const { visibleText, calls } = await response.complete(options.describe);
        const refused = new Set(calls.filter((call) => call.invalid).map((call) => call.id));
        return { ok: true, message: withoutInputs(event.message, refused), visibleText, toolCalls: calls, usage: event.usage, stopReason: event.stopReason, lastAttempt: attempt };
      }
      case "error":
        finalError = event.failure.message;
        overflow = Boolean(event.failure.overflow);
        if (event.failure.usage) spent = addUsage(spent ?? emptyUsage(), event.failure.usage);
        break;
      default:
        await response.take(event);
    }
  }
  const aborted = options.signal.aborted;
  // What a reader saw stays said: the open block is closed, and each block becomes a complete entry (stored, replayed).
  const partialText = aborted ? await response.interrupted() : undefined;
  return {
    ok: false, error: finalError, partialRaw: response.raw, aborted,
    ...(overflow ? { overflow } : {}), ...(spent ? { usage: spent } : {}), ...(partialText ? { partialText } : {}),
  };
}
