import { isIP } from "node:net";
import type { ProviderFailure } from "../../protocol/provider.js";
import type { SdkFetch } from "./http.js";
import type { ProviderKind } from "./registry.js";

/** How to reach one model behind a vendor API; built by the registry from config. */
export interface ProviderOptions {
  kind: ProviderKind;
  /** The configured provider name (e.g. "opencode"); defaults to `kind`. */
  providerId?: string;
  /** Bare model id sent to the API. */
  model: string;
  /** Anthropic: without /v1; OpenAI: with /v1. */
  baseURL?: string;
  /** Where baseURL came from (a variable or config key), named when the server cannot be reached. */
  baseURLSource?: string;
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
  /** False: the model takes no images; image blocks are sent as a text note (imageNote) instead. Default true. */
  images?: boolean;
  /** SDK timeout for getting response headers (the SDKs stop timing once the body starts). */
  requestTimeoutMs?: number;
  /**
   * The fetch the SDK uses (a cassette's recorder or player); default: createFetch(). A held request (its init's
   * `HOLD`, http.ts) must not leave before that promise settles: pass it on to createFetch's fetch, or send nothing.
   */
  fetch?: SdkFetch;
}

/** Where a provider sends its requests, named in a failure when the server cannot be reached. */
export interface Endpoint {
  url: string;
  /** The variable or config key the URL came from. */
  source?: string;
  /** The proxy the request goes through, if a proxy variable applies to the URL's scheme. */
  proxy?: { url: string; source: string };
}

/** Where each SDK sends requests when no base URL is configured. */
export const DEFAULT_BASE_URLS = { anthropic: "https://api.anthropic.com", openai: "https://api.openai.com/v1" } as const;

/** The endpoint of `options` (the SDK's default URL when none is configured) and the proxy variable that applies to it. */
export function endpointOf(options: ProviderOptions, defaultURL: string, env: NodeJS.ProcessEnv = process.env): Endpoint {
  const url = options.baseURL ?? defaultURL;
  // As undici's EnvHttpProxyAgent (app/providers/http.ts) picks them; NO_PROXY is left to the address check.
  const names = url.startsWith("https:") ? ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] : ["HTTP_PROXY", "http_proxy"];
  const name = names.find((n) => (env[n] ?? "").trim() !== "");
  return { url, source: options.baseURLSource, ...(name ? { proxy: { url: env[name]!, source: name } } : {}) };
}

/** What a model that takes no images reads in place of one (`name`: where it came from). */
export function imageNote(name: string | undefined): string {
  return `[image${name ? ` ${name}` : ""} not sent: this model does not take images (providers.<id>.models.<model>.images in the config)]`;
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
// A server that is down or a host that does not resolve is not a transient 500:
// one more try (a restart, a DNS blip), then a message that names the setting.
const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "DNS lookup failed",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
};
/** Retries for an unreachable endpoint, whatever the retry policy allows. */
export const UNREACHABLE_MAX_RETRIES = 1;
const NETWORK_TEXT = /terminated|socket|other side closed|ECONN|EPIPE|ETIMEDOUT|network|fetch failed|connection error|timed out/i;

/**
 * Turns whatever an SDK threw into a ProviderFailure. Duck-typed on purpose:
 * class names do not survive a minified bundle, and importing the SDKs' error
 * classes here would load both SDKs at startup.
 */
export function classifyFailure(err: unknown, signal?: AbortSignal, endpoint?: Endpoint): ProviderFailure {
  if (signal?.aborted) return abortedFailure();
  // A replayed request the cassette cannot serve: retrying would fail the same way (replay-fetch.ts).
  const replay = findCause(err, (c) => c.code === "KEEN_REPLAY");
  if (replay) return { message: String(replay.message), retryable: false };
  const e = (err ?? {}) as { status?: unknown; headers?: unknown; error?: unknown; type?: unknown; message?: unknown };
  const message = vendorMessage(e) ?? describeError(err);
  if (typeof e.status === "number") {
    const status = e.status;
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    const retryAfterMs = retryAfterFromHeaders(e.headers);
    const overflow = (status === 400 || status === 413) && isOverflow(message, e.error);
    return { message, retryable, status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}), ...(overflow ? { overflow } : {}) };
  }
  // An error event inside an HTTP 200 stream (Anthropic `overloaded_error`, OpenAI `{error}` chunk).
  if (e.error !== undefined && e.error !== null) {
    const type = typeof e.type === "string" ? e.type : errorTypeOf(e.error);
    return { message, retryable: !(type !== undefined && PERMANENT_TYPES.has(type)) };
  }
  if (endpoint) {
    const where = `${endpoint.url}${endpoint.source ? ` (from ${endpoint.source})` : ""}`;
    const refused = findCause(err, (e) => typeof e.code === "string" && e.code in UNREACHABLE);
    if (refused) {
      const proxy = endpoint.proxy;
      const target = proxy && isAddressOf(refused, proxy.url) && !isAddressOf(refused, endpoint.url)
        ? `the proxy ${proxy.url} (from ${proxy.source}) for ${where}`
        : where;
      const reason = UNREACHABLE[refused.code as string];
      return { message: `cannot reach ${target}: ${reason} (${describeError(err)})`, retryable: true, maxRetries: UNREACHABLE_MAX_RETRIES };
    }
    // fetch refuses ports reserved for other protocols (the fetch standard's "bad port" list); no retry helps.
    if (findCause(err, (e) => e.message === "bad port")) {
      return { message: `cannot use ${where}: fetch refuses its port (reserved for another protocol); choose another port`, retryable: false };
    }
  }
  return { message, retryable: isNetworkError(err) };
}

type CauseLike = { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown; address?: unknown; hostname?: unknown; port?: unknown };

/** The first error in `err`'s cause chain (and AggregateError members) that `test` accepts. */
function findCause(err: unknown, test: (e: CauseLike) => boolean): CauseLike | undefined {
  const queue: unknown[] = [err];
  for (let i = 0; i < queue.length && i < 16; i++) {
    const e = queue[i] as CauseLike | null;
    if (!e || typeof e !== "object") continue;
    if (test(e)) return e;
    if (e.cause) queue.push(e.cause);
    // Happy eyeballs (IPv6 and IPv4 tried) fails with an AggregateError of both.
    if (Array.isArray(e.errors)) queue.push(...e.errors);
  }
  return undefined;
}

/** Whether a socket error is about `url`'s host: the name that did not resolve, or the address and port refused. */
function isAddressOf(e: CauseLike, url: string): boolean {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return false;
  }
  const host = target.hostname.replace(/^\[|\]$/g, "");
  const port = Number(target.port || (target.protocol === "https:" ? 443 : 80));
  if (e.hostname === host) return true;
  if (e.port !== port) return false;
  return e.address === host || isIP(host) === 0;
}

/** "429 rate_limit_error: …" from the error body, instead of the SDK's JSON dump. */
function vendorMessage(e: { status?: unknown; error?: unknown }): string | undefined {
  const body = e.error as { message?: unknown; type?: unknown; error?: { message?: unknown; type?: unknown } } | undefined;
  const inner = body?.error ?? body; // Anthropic nests {type:"error", error:{…}}; OpenAI's SDK already unwrapped it
  if (typeof inner?.message !== "string") return undefined;
  const text = typeof inner.type === "string" ? `${inner.type}: ${inner.message}` : inner.message;
  return typeof e.status === "number" ? `${e.status} ${text}` : text;
}

// Anthropic: "prompt is too long: 210000 tokens > 200000 maximum"; OpenAI: code context_length_exceeded,
// "This model's maximum context length is ..."; compatible servers word it their own way.
const OVERFLOW_TEXT = /prompt is too long|context[_ ]length|maximum context|context window|too many tokens|input is too long|request too large/i;

/** True when an HTTP 400/413 says the request did not fit the context window. */
function isOverflow(message: string, body: unknown): boolean {
  const b = body as { code?: unknown; error?: { code?: unknown } } | undefined;
  const code = b?.code ?? b?.error?.code;
  return code === "context_length_exceeded" || OVERFLOW_TEXT.test(message);
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
