import type { Message, Usage } from "../../protocol/messages.js";
import type { Provider, ProviderEvent, ProviderFailure, ProviderRequest } from "../../protocol/provider.js";

/** One scripted step of the fake provider. */
export type FakeStep =
  | { text?: string; deltas?: string[]; thinking?: string; toolCalls?: { id: string; name: string; input: unknown }[]; usage?: Partial<Usage> }
  | { fail: ProviderFailure; deltas?: string[] }
  | { hang: true; deltas?: string[] };

/**
 * The one scripted in-process provider for loop tests. Records every request,
 * fails loudly when the script runs out, and checks that every tool call of
 * the previous assistant message is answered exactly once.
 */
export class FakeProvider implements Provider {
  readonly providerId = "fake";
  readonly model = "fake-model";
  readonly requests: ProviderRequest[] = [];
  constructor(private script: FakeStep[]) {}

  async *stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
    // A request may be built early but is "sent" (recorded, answered) only once its notBefore settles, as the real providers do.
    const { notBefore, ...sent } = request;
    await notBefore?.catch(() => {});
    this.requests.push(structuredClone(sent));
    checkToolAnswers(request.messages);
    const step = this.script.shift();
    if (!step) throw new Error(`FakeProvider: script ran out at request ${this.requests.length}`);
    for (const d of step.deltas ?? []) yield { type: "text-delta", text: d };
    if ("fail" in step) {
      yield { type: "error", failure: step.fail };
      return;
    }
    if ("hang" in step) {
      // Aborted before the hang began (an interrupt right after the first delta): end at once.
      if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      yield { type: "error", failure: { message: "aborted", retryable: false } };
      return;
    }
    const content: Message["content"] = [];
    if (step.thinking) {
      yield { type: "thinking-start" };
      yield { type: "thinking-delta", text: step.thinking };
      yield { type: "thinking-end" };
      content.push({ type: "thinking", thinking: step.thinking, signature: "sig" });
    }
    const text = step.deltas ? step.deltas.join("") : (step.text ?? "");
    if (!step.deltas && step.text) yield { type: "text-delta", text: step.text };
    if (text) {
      yield { type: "text-end" };
      content.push({ type: "text", text });
    }
    for (const call of step.toolCalls ?? []) {
      yield { type: "tool-call", ...call };
      content.push({ type: "tool_call", ...call });
    }
    const usage: Usage = { input_tokens: 10, cached_tokens: 0, cache_write_tokens: 0, output_tokens: 5, reasoning_tokens: 0, total_tokens: 15, ...step.usage };
    yield { type: "done", message: { role: "assistant", content }, usage, stopReason: step.toolCalls?.length ? "tool_use" : "end_turn" };
  }
}

function checkToolAnswers(messages: Message[]) {
  messages.forEach((message, i) => {
    if (message.role !== "assistant") return;
    const ids = message.content.flatMap((b) => (b.type === "tool_call" ? [b.id] : []));
    if (!ids.length) return;
    const next = messages[i + 1];
    const answered = next?.content.flatMap((b) => (b.type === "tool_result" ? [b.tool_call_id] : [])) ?? [];
    if (ids.length !== answered.length || ids.some((id) => answered.filter((a) => a === id).length !== 1)) {
      throw new Error(`FakeProvider: tool calls ${ids.join(",")} not answered exactly once (got ${answered.join(",")})`);
    }
  });
}
