import type { ProviderFailure } from "../../protocol/provider.js";

/** How to reach one model behind a vendor API; built by the registry from config. */
export interface ProviderOptions {
  kind: "anthropic" | "openai";
  /** The configured provider name (e.g. "opencode"); defaults to `kind`. */
  providerId?: string;
  /** Bare model id sent to the API. */
  model: string;
  /** Anthropic: without /v1; OpenAI: with /v1. */
  baseURL?: string;
  apiKey: string;
  /** Anthropic only. "x-api-key" (default): x-api-key + anthropic-version 2023-06-01; "bearer": the SDK's own Authorization header and version. */
  authStyle?: "bearer" | "x-api-key";
  /** Extra headers, already resolved (e.g. x-opencode-session). */
  headers?: Record<string, string>;
  maxOutputTokens: number;
  /** Anthropic: enables extended thinking with this budget_tokens. OpenAI: ignored. */
  thinkingBudget?: number;
  /** Parameter names the model rejects, e.g. ["temperature", "max_tokens"]. */
  refuses?: string[];
  /** SDK timeout for getting response headers (the SDKs stop timing once the body starts). */
  requestTimeoutMs?: number;
}

/** The failure every aborted stream ends with. */
export function abortedFailure(): ProviderFailure {
  return { message: "aborted", retryable: false };
}

// Error types a vendor reports that will fail the same way again.
const PERMANENT_TYPES = new Set([
  "invalid_request_error",
  "authentication_error",
  "permission_error",
  "not_found_error",
  "request_too_large",
  "billing_error",
  "invalid_request",
]);

const NETWORK_CODE = /^(E[A-Z]{3,}|UND_ERR.*)$/;
const NETWORK_TEXT = /terminated|socket|other side closed|ECONN|EPIPE|ETIMEDOUT|network|fetch failed|connection error|timed out/i;

/**
 * Turns whatever an SDK threw into a ProviderFailure. Duck-typed on purpose:
 * class names do not survive a minified bundle, and importing the SDKs' error
 * classes here would load both SDKs at startup.
 */
export function classifyFailure(err: unknown, signal?: AbortSignal): ProviderFailure {
  if (signal?.aborted) return abortedFailure();
  const e = (err ?? {}) as { status?: unknown; headers?: unknown; error?: unknown; type?: unknown; message?: unknown };
  const message = vendorMessage(e) ?? describeError(err);
  if (typeof e.status === "number") {
    const status = e.status;
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    const retryAfterMs = retryAfterFromHeaders(e.headers);
    return { message, retryable, status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }
  // An error event inside an HTTP 200 stream (Anthropic `overloaded_error`, OpenAI `{error}` chunk).
  if (e.error !== undefined && e.error !== null) {
    const type = typeof e.type === "string" ? e.type : errorTypeOf(e.error);
    return { message, retryable: !(type !== undefined && PERMANENT_TYPES.has(type)) };
  }
  return { message, retryable: isNetworkError(err) };
}

/** "429 rate_limit_error: …" from the error body, instead of the SDK's JSON dump. */
function vendorMessage(e: { status?: unknown; error?: unknown }): string | undefined {
  const body = e.error as { message?: unknown; type?: unknown; error?: { message?: unknown; type?: unknown } } | undefined;
  const inner = body?.error ?? body; // Anthropic nests {type:"error", error:{…}}; OpenAI's SDK already unwrapped it
  if (typeof inner?.message !== "string") return undefined;
  const text = typeof inner.type === "string" ? `${inner.type}: ${inner.message}` : inner.message;
  return typeof e.status === "number" ? `${e.status} ${text}` : text;
}

function errorTypeOf(body: unknown): string | undefined {
  const b = body as { type?: unknown; error?: { type?: unknown } };
  if (typeof b?.error?.type === "string") return b.error.type;
  return typeof b?.type === "string" ? b.type : undefined;
}

function isNetworkError(err: unknown): boolean {
  for (let e: any = err, depth = 0; e && depth < 5; e = e.cause, depth++) {
    if (typeof e.code === "string" && NETWORK_CODE.test(e.code)) return true;
    if (typeof e.message === "string" && NETWORK_TEXT.test(e.message)) return true;
  }
  return false;
}

/** The error's message plus its causes', so "Connection error." says which one. */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  for (let e: any = err, depth = 0; e && depth < 4; e = e.cause, depth++) {
    const text = typeof e.message === "string" ? e.message : typeof e === "string" ? e : "";
    if (text && !parts.includes(text)) parts.push(text);
  }
  return parts.length > 0 ? parts.join(": ") : String(err);
}

/** Reads `retry-after-ms`, then `retry-after` (seconds or an HTTP date). */
export function retryAfterFromHeaders(headers: unknown, now = Date.now()): number | undefined {
  const get = (name: string): string | null => {
    if (!headers) return null;
    if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name);
    const value = (headers as Record<string, unknown>)[name];
    return typeof value === "string" ? value : null;
  };
  const ms = get("retry-after-ms");
  if (ms !== null && ms.trim() !== "" && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const after = get("retry-after");
  if (after === null || after.trim() === "") return undefined;
  if (Number.isFinite(Number(after))) return Math.max(0, Number(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Parses streamed tool-call arguments; the model's invalid JSON is kept raw rather than lost. */
export function parseToolInput(json: string): unknown {
  if (json.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(json);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : { _raw: json };
  } catch {
    return { _raw: json };
  }
}
