import type { Message, Usage } from "./messages.js";

/** A tool as offered to a model: name, description, JSON Schema of its input. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** One model request (a step). */
export interface ProviderRequest {
  system: string;
  messages: Message[];
  tools: ToolDefinition[];
  /** "none": tools stay defined (the APIs require it) but the model may not call them. */
  toolChoice?: "auto" | "none";
  sessionId: string;
  /**
   * The request may be built and handed to the HTTP client at once, but its bytes leave only once this settles
   * (a turn's first request while its `user-message` is still being stored: docs/sessions.md, "no request is sent
   * before ..."). A provider that cannot hold a request awaits it before starting. When it rejects, the request's
   * signal has been aborted first.
   */
  notBefore?: Promise<unknown>;
}

/** Why a provider attempt failed; `retryable` drives Keen's one retry policy. */
export interface ProviderFailure {
  message: string;
  retryable: boolean;
  status?: number;
  retryAfterMs?: number;
  /** At most this many retries for this failure, whatever the policy allows (an unreachable server). */
  maxRetries?: number;
  /** Tokens the provider reported for this request before it failed (Anthropic reports input at message start). */
  usage?: Usage;
  /** The request did not fit the model's context window ("prompt is too long", context_length_exceeded). */
  overflow?: boolean;
}

/**
 * What a provider stream yields. Contract: `stream()` never throws once called;
 * it ends with exactly one `done` or `error` event.
 */
export type ProviderEvent =
  | { type: "text-delta"; text: string }
  | { type: "text-end" }
  | { type: "thinking-start" }
  | { type: "thinking-delta"; text: string }
  | { type: "thinking-end" }
  | { type: "tool-call"; id: string; name: string; input: unknown }
  | { type: "done"; message: Message; usage: Usage; stopReason: string }
  | { type: "error"; failure: ProviderFailure };

/** A model behind a vendor API, translated into ProviderEvents. */
export interface Provider {
  readonly providerId: string;
  readonly model: string;
  stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent>;
}
