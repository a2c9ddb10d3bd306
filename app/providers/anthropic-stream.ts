import type { Anthropic } from "@anthropic-ai/sdk";
import type { ContentBlock, Message, Usage } from "../../protocol/messages.js";
import type { ProviderEvent, ProviderFailure } from "../../protocol/provider.js";
import { parseToolInput } from "./options.js";

/** One event of an Anthropic Messages stream. */
export type AnthropicStreamEvent = Anthropic.RawMessageStreamEvent;

type Slot =
  | { kind: "text"; text: string }
  | { kind: "thinking"; thinking: string; signature: string }
  | { kind: "redacted"; data: string }
  | { kind: "tool"; id: string; name: string; json: string; input?: unknown }
  | { kind: "other" };

/**
 * Anthropic's raw stream events (`message_start`, `content_block_delta`, …) → Keen's
 * ProviderEvents, accumulating one streamed message; usage fields are cumulative, so the
 * latest value wins. THE parser of those events: the Anthropic provider feeds it the SDK's
 * stream, the CLI runner (app/agent/cli-stream.ts) the `stream_event` lines of `claude`'s
 * stream-json, whose `event` is the same object.
 */
export class AnthropicStreamState {
  stopped = false;
  stopReason = "end_turn";
  private slots = new Map<number, Slot>();
  private input = 0;
  private cacheRead = 0;
  private cacheWrite = 0;
  private output = 0;
  private reported = false;

  /** True once the server reported usage (message_start, message_delta). */
  get reportedUsage(): boolean {
    return this.reported;
  }

  /** `failure` with the usage reported so far, if the server reported any. */
  spent(failure: ProviderFailure): ProviderFailure {
    return this.reported ? { ...failure, usage: this.usage() } : failure;
  }

  *handle(event: AnthropicStreamEvent): Generator<ProviderEvent> {
    switch (event.type) {
      case "message_start":
        this.takeUsage(event.message.usage);
        break;
      case "message_delta":
        this.takeUsage(event.usage);
        if (event.delta.stop_reason) this.stopReason = event.delta.stop_reason;
        break;
      case "message_stop":
        this.stopped = true;
        break;
      case "content_block_start": {
        const block = event.content_block;
        if (block.type === "text") {
          this.slots.set(event.index, { kind: "text", text: block.text });
          if (block.text) yield { type: "text-delta", text: block.text };
        } else if (block.type === "thinking") {
          this.slots.set(event.index, { kind: "thinking", thinking: block.thinking, signature: block.signature });
          yield { type: "thinking-start" };
          if (block.thinking) yield { type: "thinking-delta", text: block.thinking };
        } else if (block.type === "redacted_thinking") {
          this.slots.set(event.index, { kind: "redacted", data: block.data });
        } else if (block.type === "tool_use") {
          this.slots.set(event.index, { kind: "tool", id: block.id, name: block.name, json: "" });
        } else {
          this.slots.set(event.index, { kind: "other" });
        }
        break;
      }
      case "content_block_delta": {
        const slot = this.slots.get(event.index);
        const delta = event.delta;
        if (delta.type === "text_delta" && slot?.kind === "text") {
          slot.text += delta.text;
          yield { type: "text-delta", text: delta.text };
        } else if (delta.type === "thinking_delta" && slot?.kind === "thinking") {
          slot.thinking += delta.thinking;
          yield { type: "thinking-delta", text: delta.thinking };
        } else if (delta.type === "signature_delta" && slot?.kind === "thinking") {
          slot.signature += delta.signature;
        } else if (delta.type === "input_json_delta" && slot?.kind === "tool") {
          slot.json += delta.partial_json;
        }
        break;
      }
      case "content_block_stop": {
        const slot = this.slots.get(event.index);
        if (slot?.kind === "text") yield { type: "text-end" };
        else if (slot?.kind === "thinking") yield { type: "thinking-end" };
        else if (slot?.kind === "tool") {
          slot.input = parseToolInput(slot.json);
          yield { type: "tool-call", id: slot.id, name: slot.name, input: slot.input };
        }
        break;
      }
    }
  }

  private takeUsage(u: Partial<Record<"input_tokens" | "output_tokens" | "cache_read_input_tokens" | "cache_creation_input_tokens", number | null>>) {
    this.reported = true;
    if (typeof u.input_tokens === "number") this.input = u.input_tokens;
    if (typeof u.cache_read_input_tokens === "number") this.cacheRead = u.cache_read_input_tokens;
    if (typeof u.cache_creation_input_tokens === "number") this.cacheWrite = u.cache_creation_input_tokens;
    if (typeof u.output_tokens === "number") this.output = u.output_tokens;
  }

  usage(): Usage {
    const input = this.input + this.cacheRead + this.cacheWrite;
    return {
      input_tokens: input,
      cached_tokens: this.cacheRead,
      cache_write_tokens: this.cacheWrite,
      output_tokens: this.output,
      reasoning_tokens: 0,
      total_tokens: input + this.output,
    };
  }

  message(): Message {
    const content: ContentBlock[] = [];
    for (const [, slot] of [...this.slots].sort(([a], [b]) => a - b)) {
      if (slot.kind === "text" && slot.text !== "") content.push({ type: "text", text: slot.text });
      else if (slot.kind === "thinking") content.push({ type: "thinking", thinking: slot.thinking, signature: slot.signature });
      else if (slot.kind === "redacted") content.push({ type: "redacted_thinking", data: slot.data });
      else if (slot.kind === "tool") {
        content.push({ type: "tool_call", id: slot.id, name: slot.name, input: slot.input ?? parseToolInput(slot.json) });
      }
    }
    return { role: "assistant", content };
  }
}
