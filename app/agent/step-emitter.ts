import type { CallView, EventDraft } from "../../protocol/events.js";
import type { ProviderEvent } from "../../protocol/provider.js";
import { MemoryFilter } from "./memory-filter.js";
import type { ToolCall } from "./tool-runner.js";

/** The streaming part of a model response: what the emitter turns into events as it arrives. */
export type StreamedEvent = Extract<ProviderEvent, { type: "text-delta" | "text-end" | "thinking-start" | "thinking-delta" | "thinking-end" }>;

/** What a response came to once complete: its visible text and its tool calls. */
export interface EmittedResponse {
  /** The visible answer (memory blocks removed, and the whitespace before one). */
  visibleText: string;
  calls: ToolCall[];
}

/** Turns one model response into Keen's events (see createStepEmitter). */
export interface StepEmitter {
  /** Emits a streaming piece: `text-delta` (memory filtered) and `content-end`, `thinking-*`. */
  take(event: StreamedEvent): Promise<void>;
  /** Holds a complete tool call, announced by `complete`. */
  call(call: ToolCall): void;
  /**
   * The response is complete: closes an open text block, then emits its complete entries
   * (`thinking`, `text`, `memory`, `tool-use` carrying `describe`'s view of each valid call).
   */
  complete(describe?: (name: string, input: unknown) => CallView | undefined): Promise<EmittedResponse>;
  /** The response was cut by an interrupt: what streamed stays said, as `text` entries marked `interrupted`. Returns that text. */
  interrupted(): Promise<string>;
  /** Every text delta as the model sent it, memory blocks included. */
  readonly raw: string;
}

/**
 * THE mapping from a model response to Keen's events, shared by both turn backends: the
 * embedded loop's step (app/agent/step.ts) feeds it a provider's ProviderEvents per attempt;
 * the CLI runner (app/agent/cli-stream.ts) feeds it each message of `claude`'s stream-json,
 * parsed by the Anthropic provider's own stream parser. Deltas are emitted as they arrive,
 * tagged with `attempt`, visible text through the memory filter; complete entries wait for
 * `complete`, so a failed attempt never produces one.
 */
export function createStepEmitter(emit: (event: EventDraft) => Promise<void>, attempt: number): StepEmitter {
  const filter = new MemoryFilter();
  let raw = "";
  let blockText = "";
  const texts: string[] = [];
  let thinking = "";
  const thinkings: string[] = [];
  const calls: ToolCall[] = [];

  async function emitText(visible: string) {
    blockText += visible;
    await emit({ kind: "text-delta", role: "assistant", attempt, delta: visible });
  }

  return {
    async take(event) {
      switch (event.type) {
        case "text-delta": {
          raw += event.text;
          const visible = filter.push(event.text);
          if (visible) await emitText(visible);
          return;
        }
        case "text-end": {
          const visible = filter.flush();
          if (visible) await emitText(visible);
          if (blockText) {
            await emit({ kind: "content-end", role: "assistant", attempt });
            texts.push(blockText);
            blockText = "";
          }
          return;
        }
        case "thinking-start":
          thinking = "";
          return emit({ kind: "thinking-start", role: "assistant", attempt });
        case "thinking-delta":
          thinking += event.text;
          return emit({ kind: "thinking-delta", role: "assistant", attempt, delta: event.text });
        case "thinking-end":
          thinkings.push(thinking);
          return emit({ kind: "thinking-end", role: "assistant", attempt });
      }
    },
    call(call) {
      calls.push(call);
    },
    async complete(describe) {
      const tail = filter.flush();
      if (tail) {
        await emitText(tail);
        await emit({ kind: "content-end", role: "assistant", attempt });
      }
      if (blockText) texts.push(blockText);
      blockText = "";
      const memory = filter.memory();
      for (const content of thinkings) if (content) await emit({ kind: "thinking", role: "assistant", content });
      for (const content of texts) await emit({ kind: "text", role: "assistant", content });
      if (memory !== undefined) await emit({ kind: "memory", role: "assistant", content: memory });
      for (const call of calls) {
        const view = call.invalid ? undefined : describe?.(call.name, call.input);
        await emit({ kind: "tool-use", role: "assistant", tool_name: call.name, tool_call_id: call.id, input: JSON.stringify(call.input ?? {}), ...view });
      }
      // The answer keeps no whitespace that stood before a removed memory block (`text` events still equal their deltas).
      return { visibleText: memory === undefined ? texts.join("") : texts.join("").trimEnd(), calls };
    },
    async interrupted() {
      if (blockText) {
        await emit({ kind: "content-end", role: "assistant", attempt });
        texts.push(blockText);
        blockText = "";
      }
      for (const content of texts) await emit({ kind: "text", role: "assistant", content, interrupted: true });
      return texts.join("");
    },
    get raw() {
      return raw;
    },
  };
}
