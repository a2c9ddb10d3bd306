import type { OpenAI } from "openai";
import type { ContentBlock, Message, Usage } from "../../protocol/messages.js";
import type { Provider, ProviderEvent, ProviderFailure, ProviderRequest } from "../../protocol/provider.js";
import { afterIO } from "../after-io.js";
import { createFetch, holdOptions } from "./http.js";
import { DEFAULT_BASE_URLS, abortedFailure, classifyFailure, endpointOf, imageNote, parseToolInput, type ProviderOptions } from "./options.js";
import { createThinkTagSplitter, type ThinkSegment } from "./think-tags.js";

const DEFAULT_BASE_URL = DEFAULT_BASE_URLS.openai;

type Params = OpenAI.Chat.ChatCompletionCreateParamsStreaming;
type Chunk = OpenAI.Chat.ChatCompletionChunk;
type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;

// Keen speaks Anthropic's stop-reason vocabulary; OpenAI's finish_reason maps onto it.
const STOP_REASONS: Record<string, string> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  function_call: "tool_use",
  length: "max_tokens",
  content_filter: "refusal",
};

/**
 * OpenAI Chat Completions (and compatible servers) through the official SDK.
 * Contract: `stream()` never throws; it ends with exactly one `done` or `error`.
 */
export function createOpenAIProvider(options: ProviderOptions): Provider {
  let client: Promise<OpenAI> | undefined;
  const getClient = () => (client ??= import("openai").then((sdk) => makeClient(sdk.OpenAI, options)));
  // Build the client (which loads node's fetch, tens of ms of CPU) once the event loop has polled for I/O: the
  // session store's disk I/O, issued meanwhile, then runs in the background instead of after it. A failure surfaces at the request.
  void afterIO().then(() => getClient().catch(() => {}));

  return {
    providerId: options.providerId ?? "openai",
    model: options.model,
    async *stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
      if (signal.aborted) return yield { type: "error", failure: abortedFailure() };
      const state = new StreamState();
      try {
        const sdk = await getClient();
        const chunks = await sdk.chat.completions.create(buildOpenAIRequest(options, request), { signal, ...holdOptions(request) });
        for await (const chunk of chunks) yield* state.handle(chunk);
      } catch (err) {
        return yield { type: "error", failure: state.spent(classifyFailure(err, signal, endpointOf(options, DEFAULT_BASE_URL))) };
      }
      if (signal.aborted) return yield { type: "error", failure: state.spent(abortedFailure()) };
      if (state.finishReason === undefined) {
        return yield { type: "error", failure: state.spent({ message: "stream ended without a finish_reason", retryable: true }) };
      }
      yield* state.finish();
      yield { type: "done", message: state.message(), usage: state.usage, stopReason: state.stopReason() };
    },
  };
}

function makeClient(OpenAIClass: typeof OpenAI, options: ProviderOptions): OpenAI {
  return new OpenAIClass({
    // Local servers need no key, but the SDK refuses to start without one.
    apiKey: options.apiKey || "no-key",
    baseURL: options.baseURL ?? null,
    fetch: options.fetch ?? createFetch(),
    maxRetries: 0,
    ...(options.requestTimeoutMs !== undefined ? { timeout: options.requestTimeoutMs } : {}),
    defaultHeaders: { ...options.headers },
  });
}

/** The request body Keen sends for one step; exported for tests and debugging. */
export function buildOpenAIRequest(options: ProviderOptions, request: ProviderRequest): Params {
  const messages: ChatMessage[] = [];
  if (request.system !== "") messages.push({ role: "system", content: request.system });
  for (const message of request.messages) messages.push(...toOpenAIMessages(message, options.images !== false));
  const params: Params = {
    model: options.model,
    messages,
    stream: true,
    stream_options: { include_usage: true },
  };
  if (options.refuses?.includes("max_tokens")) params.max_completion_tokens = options.maxOutputTokens;
  else params.max_tokens = options.maxOutputTokens;
  // The API rejects `tools: []` and a tool_choice without tools.
  if (request.tools.length > 0) {
    params.tools = request.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
    }));
    if (request.toolChoice === "none") params.tool_choice = "none";
  }
  return params;
}

function toOpenAIMessages(message: Message, takesImages: boolean): ChatMessage[] {
  const text = message.content.flatMap((b) => (b.type === "text" ? [b.text] : b.type === "image" && !takesImages ? [`\n${imageNote(b.name)}`] : [])).join("");
  if (message.role === "assistant") {
    const calls = message.content.flatMap((b) => (b.type === "tool_call" ? [b] : []));
    if (text === "" && calls.length === 0) return [];
    return [
      {
        role: "assistant",
        content: text === "" ? null : text,
        ...(calls.length > 0
          ? {
              tool_calls: calls.map((call) => ({
                id: call.id,
                type: "function" as const,
                function: { name: call.name, arguments: JSON.stringify(call.input ?? {}) },
              })),
            }
          : {}),
      },
    ];
  }
  // Tool answers must directly follow the assistant turn that asked, before any user text.
  const out: ChatMessage[] = message.content.flatMap((b) =>
    b.type === "tool_result"
      ? [{ role: "tool" as const, tool_call_id: b.tool_call_id, content: b.images?.length && !takesImages ? `${b.content}\n${imageNote(undefined)}` : b.content }]
      : [],
  );
  const parts = userParts(message, takesImages);
  if (parts.some((p) => p.type === "image_url")) out.push({ role: "user", content: parts });
  else if (text !== "") out.push({ role: "user", content: text });
  return out;
}

type UserPart = OpenAI.Chat.ChatCompletionContentPart;

/**
 * A user message's parts: Chat Completions takes no images in `tool` messages, so the images a
 * tool returned (read_file on a png) follow the tool answers in this user message, each group
 * introduced by the call it came from; then the user's own text and images, in order.
 */
function userParts(message: Message, takesImages: boolean): UserPart[] {
  const image = (media_type: string, data: string): UserPart => ({ type: "image_url", image_url: { url: `data:${media_type};base64,${data}` } });
  const parts: UserPart[] = [];
  if (takesImages) {
    for (const b of message.content) {
      if (b.type !== "tool_result" || !b.images?.length) continue;
      parts.push({ type: "text", text: `The image${b.images.length > 1 ? "s" : ""} returned by tool call ${b.tool_call_id}:` });
      for (const i of b.images) parts.push(image(i.media_type, i.data));
    }
  }
  for (const b of message.content) {
    if (b.type === "text" && b.text !== "") parts.push({ type: "text", text: b.text });
    else if (b.type === "image") parts.push(takesImages ? image(b.media_type, b.data) : { type: "text", text: imageNote(b.name) });
  }
  return parts;
}

interface ToolSlot {
  id: string;
  name: string;
  json: string;
}

/** Fields some OpenAI-compatible servers add to a delta for reasoning models. */
interface ReasoningDelta {
  reasoning_content?: string | null;
  reasoning?: string | null;
}

/** Accumulates one streamed completion and opens/closes text and thinking blocks. */
class StreamState {
  finishReason: string | undefined;
  usage: Usage = { input_tokens: 0, cached_tokens: 0, cache_write_tokens: 0, output_tokens: 0, reasoning_tokens: 0, total_tokens: 0 };
  private content: ContentBlock[] = [];
  private open: "text" | "thinking" | undefined;
  private tools: ToolSlot[] = [];
  private splitter = createThinkTagSplitter();
  private toolsEmitted = false;
  private reported = false;

  /** `failure` with the usage reported so far, if the server reported any (OpenAI streams it last, if at all). */
  spent(failure: ProviderFailure): ProviderFailure {
    return this.reported ? { ...failure, usage: this.usage } : failure;
  }

  *handle(chunk: Chunk): Generator<ProviderEvent> {
    if (chunk.usage) {
      this.reported = true;
      this.takeUsage(chunk.usage);
    }
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta = (choice.delta ?? {}) as OpenAI.Chat.ChatCompletionChunk.Choice.Delta & ReasoningDelta;
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (reasoning) yield* this.append({ kind: "thinking", text: reasoning });
    if (delta.content) for (const segment of this.splitter.push(delta.content)) yield* this.append(segment);
    for (const call of delta.tool_calls ?? []) {
      yield* this.endContent();
      const slot = (this.tools[call.index] ??= { id: "", name: "", json: "" });
      if (call.id) slot.id = call.id;
      if (call.function?.name) slot.name += call.function.name;
      if (call.function?.arguments) slot.json += call.function.arguments;
    }
    if (choice.finish_reason) {
      this.finishReason = choice.finish_reason;
      yield* this.finish();
    }
  }

  /** Closes what is open and emits the tool calls; safe to call twice. */
  *finish(): Generator<ProviderEvent> {
    yield* this.endContent();
    if (this.toolsEmitted) return;
    this.toolsEmitted = true;
    this.tools.forEach((slot, index) => {
      // Some compatible servers omit ids; Keen needs one to pair the result.
      if (!slot.id) slot.id = `call_${index}_${Date.now().toString(36)}`;
    });
    for (const slot of this.tools.filter(Boolean)) {
      const input = parseToolInput(slot.json);
      this.content.push({ type: "tool_call", id: slot.id, name: slot.name, input });
      yield { type: "tool-call", id: slot.id, name: slot.name, input };
    }
  }

  private *append(segment: ThinkSegment): Generator<ProviderEvent> {
    if (this.open !== segment.kind) {
      yield* this.close();
      this.open = segment.kind;
      if (segment.kind === "thinking") {
        this.content.push({ type: "thinking", thinking: "" });
        yield { type: "thinking-start" };
      } else {
        this.content.push({ type: "text", text: "" });
      }
    }
    const block = this.content[this.content.length - 1]!;
    if (block.type === "thinking") {
      block.thinking += segment.text;
      yield { type: "thinking-delta", text: segment.text };
    } else if (block.type === "text") {
      block.text += segment.text;
      yield { type: "text-delta", text: segment.text };
    }
  }

  /** Content is over (a tool call or the end): release what the splitter held back. */
  private *endContent(): Generator<ProviderEvent> {
    for (const segment of this.splitter.flush()) yield* this.append(segment);
    yield* this.close();
  }

  private *close(): Generator<ProviderEvent> {
    if (this.open === "thinking") yield { type: "thinking-end" };
    else if (this.open === "text") yield { type: "text-end" };
    this.open = undefined;
  }

  private takeUsage(u: OpenAI.CompletionUsage) {
    const input = u.prompt_tokens ?? 0;
    const output = u.completion_tokens ?? 0;
    this.usage = {
      input_tokens: input,
      cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0,
      cache_write_tokens: 0,
      output_tokens: output,
      reasoning_tokens: u.completion_tokens_details?.reasoning_tokens ?? 0,
      total_tokens: input + output,
    };
  }

  stopReason(): string {
    // Some compatible servers say "stop" even when the turn ends in tool calls.
    if (this.tools.length > 0 && (this.finishReason === "stop" || this.finishReason === "tool_calls")) return "tool_use";
    const reason = this.finishReason ?? "stop";
    return STOP_REASONS[reason] ?? reason;
  }

  message(): Message {
    return { role: "assistant", content: this.content };
  }
}
