import { test } from "node:test";
import assert from "node:assert/strict";
import { classifyFailure, endpointOf, UNREACHABLE_MAX_RETRIES } from "../../app/providers/options.js";
import { streamWithRetry } from "../../app/agent/retry.js";
import { FakeProvider } from "../fakes/fake-provider.js";

/** What the SDKs throw: "Connection error." caused by fetch's TypeError caused by the socket error. */
function sdkError(socketError: Record<string, unknown>) {
  const socket = Object.assign(new Error(String(socketError.message)), socketError);
  return new Error("Connection error.", { cause: new TypeError("fetch failed", { cause: socket }) });
}
const refused = (address: string, port: number) => ({ message: `connect ECONNREFUSED ${address}:${port}`, code: "ECONNREFUSED", address, port });

test("connection refused names the URL and its source, and allows one retry", () => {
  const endpoint = { url: "http://127.0.0.1:4000", source: "ANTHROPIC_BASE_URL" };
  assert.deepEqual(classifyFailure(sdkError(refused("127.0.0.1", 4000)), undefined, endpoint), {
    message: "cannot reach http://127.0.0.1:4000 (from ANTHROPIC_BASE_URL): connection refused (Connection error.: fetch failed: connect ECONNREFUSED 127.0.0.1:4000)",
    retryable: true,
    maxRetries: UNREACHABLE_MAX_RETRIES,
  });
  // Happy eyeballs: localhost tried on ::1 and 127.0.0.1, an AggregateError of both.
  const both = Object.assign(new AggregateError([Object.assign(new Error("a"), refused("::1", 4000)), Object.assign(new Error("b"), refused("127.0.0.1", 4000))], ""), { code: undefined });
  const failure = classifyFailure(new Error("Connection error.", { cause: new TypeError("fetch failed", { cause: both }) }), undefined, { url: "http://localhost:4000", source: "OLLAMA_BASE_URL" });
  assert.match(failure.message, /^cannot reach http:\/\/localhost:4000 \(from OLLAMA_BASE_URL\): connection refused/);
  assert.equal(failure.maxRetries, 1);
  // Without an endpoint (older callers) the failure stays a plain retryable network error.
  assert.deepEqual(classifyFailure(sdkError(refused("127.0.0.1", 4000))), {
    message: "Connection error.: fetch failed: connect ECONNREFUSED 127.0.0.1:4000", retryable: true,
  });
});

test("DNS failures, the proxy that refused, and fetch's bad ports", () => {
  const endpoint = { url: "https://llm.example.invalid/v1", source: "providers.x.baseURL in your config" };
  const dns = classifyFailure(sdkError({ message: "getaddrinfo ENOTFOUND llm.example.invalid", code: "ENOTFOUND", hostname: "llm.example.invalid" }), undefined, endpoint);
  assert.match(dns.message, /^cannot reach https:\/\/llm\.example\.invalid\/v1 \(from providers\.x\.baseURL in your config\): host not found/);
  assert.equal(dns.maxRetries, 1);
  const viaProxy = { ...endpoint, proxy: { url: "http://127.0.0.1:3128", source: "HTTPS_PROXY" } };
  assert.match(classifyFailure(sdkError(refused("127.0.0.1", 3128)), undefined, viaProxy).message,
    /^cannot reach the proxy http:\/\/127\.0\.0\.1:3128 \(from HTTPS_PROXY\) for https:\/\/llm\.example\.invalid\/v1 /);
  const badPort = classifyFailure(new Error("Connection error.", { cause: new TypeError("fetch failed", { cause: new Error("bad port") }) }), undefined, { url: "http://127.0.0.1:6000", source: "ANTHROPIC_BASE_URL" });
  assert.deepEqual(badPort, { message: "cannot use http://127.0.0.1:6000 (from ANTHROPIC_BASE_URL): fetch refuses its port (reserved for another protocol); choose another port", retryable: false });
});

test("endpointOf: the configured URL or the SDK default, and the proxy variable for its scheme", () => {
  const options = { kind: "anthropic" as const, model: "m", apiKey: "k", maxOutputTokens: 1 };
  assert.deepEqual(endpointOf(options, "https://api.anthropic.com", {}), { url: "https://api.anthropic.com", source: undefined });
  assert.deepEqual(endpointOf({ ...options, baseURL: "http://h:1", baseURLSource: "X" }, "d", { HTTPS_PROXY: "http://p:1" }), { url: "http://h:1", source: "X" });
  assert.deepEqual(endpointOf(options, "https://a", { HTTP_PROXY: "http://p:2" }).proxy, { url: "http://p:2", source: "HTTP_PROXY" });
});

test("the retry policy gives a failure no more retries than it allows", async () => {
  const down = { message: "cannot reach", retryable: true, maxRetries: 1 };
  const provider = new FakeProvider([{ fail: down }, { fail: down }, { fail: down }]);
  const request = { system: "", messages: [], tools: [], sessionId: "s" };
  const seen = [];
  for await (const e of streamWithRetry(provider, request, { maxRetries: 4, maxWaitMs: 10_000, idleTimeoutMs: 10_000, baseDelayMs: 0 }, new AbortController().signal, async () => {})) seen.push(e.type);
  assert.deepEqual(seen, ["event", "retry", "event"]);
  assert.equal(provider.requests.length, 2);
});

test("context-overflow errors are marked overflow in both vendors' shapes; other 400s are not", () => {
  const anthropic = { status: 400, error: { type: "error", error: { type: "invalid_request_error", message: "prompt is too long: 210000 tokens > 200000 maximum" } } };
  const openai = { status: 400, error: { message: "Your input exceeds the limit.", type: "invalid_request_error", code: "context_length_exceeded" } };
  const other = { status: 400, error: { type: "error", error: { type: "invalid_request_error", message: "max_tokens: field required" } } };
  assert.equal(classifyFailure(anthropic).overflow, true);
  assert.equal(classifyFailure(openai).overflow, true);
  assert.equal(classifyFailure(other).overflow, undefined);
  assert.equal(classifyFailure(anthropic).retryable, false);
});
