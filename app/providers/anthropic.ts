import type { Anthropic } from "@anthropic-ai/sdk";
import type { ContentBlock, Message } from "../../protocol/messages.js";
import type { Provider, ProviderEvent, ProviderRequest } from "../../protocol/provider.js";
import { AnthropicStreamState } from "./anthropic-stream.js";
import type { createMessagesClient, MessagesClient } from "./anthropic-client.js";
import { traceStartup } from "../startup-trace.js";
import { afterIO } from "../after-io.js";
import { createFetch, holdOptions } from "./http.js";
import { DEFAULT_BASE_URLS, abortedFailure, classifyFailure, endpointOf, imageNote, type ProviderOptions } from "./options.js";

const DEFAULT_BASE_URL = DEFAULT_BASE_URLS.anthropic;

type Params = Anthropic.MessageCreateParamsStreaming;
type BlockParam = Anthropic.ContentBlockParam;

const EPHEMERAL = { type: "ephemeral" } as const;

/**
 * Anthropic Messages API through the official SDK (`messages.create({stream:true})`).
 * Contract: `stream()` never throws; it ends with exactly one `done` or `error`.
 */
export function createAnthropicProvider(options: ProviderOptions): Provider {
  let client: Promise<MessagesClient> | undefined;
  // The SDK costs tens of ms to import; only a session that uses it pays.
  const getClient = () =>
    (client ??= import("./anthropic-client.js").then((sdk) => {
      const built = makeClient(sdk.createMessagesClient, options);
      traceStartup("provider: client built (the SDK loaded)");
      return built;
    }));
  // Build the client (which loads node's fetch, tens of ms of CPU) once the event loop has polled for I/O: the
  // session store's disk I/O, issued meanwhile, then runs in the background instead of after it. A failure surfaces at the request.
  void afterIO().then(() => getClient().catch(() => {}));

  return {
    providerId: options.providerId ?? "anthropic",
    model: options.model,
    async *stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent> {
      if (signal.aborted) return yield { type: "error", failure: abortedFailure() };
      const state = new AnthropicStreamState();
      try {
        const sdk = await getClient();
        const events = await sdk.messages.create(buildAnthropicRequest(options, request), { signal, ...holdOptions(request) });
        for await (const event of events) yield* state.handle(event);
      } catch (err) {
        return yield { type: "error", failure: state.spent(classifyFailure(err, signal, endpointOf(options, DEFAULT_BASE_URL))) };
      }
      // The SDK ends iteration quietly on abort, so a short stream may mean either.
      if (signal.aborted) return yield { type: "error", failure: state.spent(abortedFailure()) };
      if (!state.stopped) {
        return yield { type: "error", failure: state.spent({ message: "stream ended before message_stop", retryable: true }) };
      }
      yield { type: "done", message: state.message(), usage: state.usage(), stopReason: state.stopReason };
    },
  };
}

function makeClient(create: typeof createMessagesClient, options: ProviderOptions): MessagesClient {
  // 1.x sends `Authorization: Bearer` and a new anthropic-version; many
  // Anthropic-compatible proxies only know the classic x-api-key handshake.
  const auth: Record<string, string | null> =
    (options.authStyle ?? "x-api-key") === "x-api-key"
      ? { "x-api-key": options.apiKey, "anthropic-version": "2023-06-01", authorization: null }
      : {};
  return create({
    apiKey: options.apiKey,
    baseURL: options.baseURL ?? null,
    fetch: options.fetch ?? createFetch(),
    maxRetries: 0,
    // The SDK's OpenTelemetry spans: nothing in Keen's process registers a tracer provider, so they never
    // record, but building each request's span attributes (its headers again, the body's fields) costs CPU before the request.
    openTelemetry: false,
    ...(options.requestTimeoutMs !== undefined ? { timeout: options.requestTimeoutMs } : {}),
    defaultHeaders: { ...auth, ...options.headers },
  });
}

/** The request body Keen sends for one step; exported for tests and debugging. */
export function buildAnthropicRequest(options: ProviderOptions, request: ProviderRequest): Params {
  const params: Params = {
    model: options.model,
    max_tokens: options.maxOutputTokens,
    stream: true,
    messages: toAnthropicMessages(request.messages, options.images !== false),
  };
  if (request.system !== "") params.system = [{ type: "text", text: request.system, cache_control: EPHEMERAL }];
  if (request.tools.length > 0) {
    params.tools = request.tools.map((tool, i) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema as Anthropic.Tool.InputSchema,
      ...(i === request.tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
    }));
    params.tool_choice = request.toolChoice === "none" ? { type: "none" } : { type: "auto" };
  }
  const budget = options.thinkingBudget;
  if (budget !== undefined) {
    params.thinking = { type: "enabled", budget_tokens: budget };
    // The API refuses max_tokens <= budget_tokens; give the answer its own room instead.
    if (params.max_tokens <= budget) params.max_tokens = budget + options.maxOutputTokens;
  }
  return params;
}

function toAnthropicMessages(messages: Message[], images: boolean): Anthropic.MessageParam[] {
  const out: Anthropic.MessageParam[] = [];
  for (const message of messages) {
    const blocks = message.content.flatMap((block) => toAnthropicBlock(block, message.role, images));
    // The API wants tool results before any text in a user turn.
    if (message.role === "user") blocks.sort((a, b) => rank(a) - rank(b));
    if (blocks.length > 0) out.push({ role: message.role, content: blocks });
  }
  // Each step of a tool loop then reads the cache written by the previous one.
  const last = out[out.length - 1];
  if (last && Array.isArray(last.content)) {
    const cacheable = last.content.filter((b) => b.type !== "thinking" && b.type !== "redacted_thinking");
    const target = cacheable[cacheable.length - 1] as { cache_control?: unknown } | undefined;
    if (target) target.cache_control = EPHEMERAL;
  }
  return out;
}

/** The image types Anthropic takes; others stay described in the result's text. */
const ANTHROPIC_IMAGE_TYPES = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);
type ImageType = "image/jpeg" | "image/png" | "image/gif" | "image/webp";

const rank = (block: BlockParam) => (block.type === "tool_result" ? 0 : 1);

function toAnthropicBlock(block: ContentBlock, role: Message["role"], takesImages: boolean): BlockParam[] {
  switch (block.type) {
    case "image":
      return takesImages
        ? [{ type: "image", source: { type: "base64", media_type: block.media_type, data: block.data } }]
        : [{ type: "text", text: imageNote(block.name) }];
    case "text":
      return block.text === "" ? [] : [{ type: "text", text: block.text }];
    case "thinking":
      // Unsigned thinking (another provider's) would be rejected; it is only context anyway.
      return role === "assistant" && block.signature
        ? [{ type: "thinking", thinking: block.thinking, signature: block.signature }]
        : [];
    case "redacted_thinking":
      return role === "assistant" ? [{ type: "redacted_thinking", data: block.data }] : [];
    case "tool_call":
      return [{ type: "tool_use", id: block.id, name: block.name, input: isObject(block.input) ? block.input : {} }];
    case "tool_result": {
      // The API refuses an empty error result.
      let text = block.is_error && block.content === "" ? "Error" : block.content;
      if (block.images?.length && !takesImages) text = `${text}\n${imageNote(undefined)}`;
      const images = takesImages ? (block.images ?? []).filter((i) => ANTHROPIC_IMAGE_TYPES.has(i.media_type)) : [];
      return [
        {
          type: "tool_result",
          tool_use_id: block.tool_call_id,
          content: images.length
            ? [
              ...(text ? [{ type: "text" as const, text }] : []),
              ...images.map((i) => ({ type: "image" as const, source: { type: "base64" as const, media_type: i.media_type as ImageType, data: i.data } })),
            ]
            : text,
          is_error: block.is_error,
        },
      ];
    }
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
