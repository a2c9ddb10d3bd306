import assert from "node:assert/strict";
import { test } from "node:test";
import type { Message } from "../../protocol/messages.js";
import type { Provider, ProviderEvent } from "../../protocol/provider.js";
import { createOpenAIProvider } from "../../app/providers/openai.js";
import type { ProviderOptions } from "../../app/providers/options.js";
import { startMockLLMServer } from "../fakes/mock-llm-server.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { collect, done, failure, READ_TOOL, request, user } from "./stream-helpers.js";

const server = useMockLLMServer();

function provider(extra: Partial<ProviderOptions> = {}, baseURL = server.openaiBaseURL): Provider {
  return createOpenAIProvider({ kind: "openai", model: "gpt-test", baseURL, apiKey: "test-key", maxOutputTokens: 1000, ...extra });
}

test("streams text with whole event sequence, message and normalised usage", async () => {
  server.enqueue({ text: "Hello there", usage: { input: 50, cacheRead: 200, output: 12, reasoning: 4 } });
  const events = await collect(provider(), request());
  assert.deepEqual(events, [
    { type: "text-delta", text: "Hello " },
    { type: "text-delta", text: "there" },
    { type: "text-end" },
    {
      type: "done",
      message: { role: "assistant", content: [{ type: "text", text: "Hello there" }] },
      usage: { input_tokens: 250, cached_tokens: 200, cache_write_tokens: 0, output_tokens: 12, reasoning_tokens: 4, total_tokens: 262 },
      stopReason: "end_turn",
    },
  ]);
  const body = server.requests[0]!.body;
  assert.deepEqual(body.stream_options, { include_usage: true });
  assert.equal(body.stream, true);
  assert.deepEqual(body.messages, [
    { role: "system", content: "You are Keen." },
    { role: "user", content: "hi" },
  ]);
});

test("<think> tags split across chunks become thinking, never text", async () => {
  server.enqueue({ thinking: "Let me see.", text: "Four.", chunkSize: 3 });
  const events = await collect(provider(), request());
  const thinking = events.flatMap((e) => (e.type === "thinking-delta" ? [e.text] : [])).join("");
  const text = events.flatMap((e) => (e.type === "text-delta" ? [e.text] : [])).join("");
  assert.equal(thinking, "Let me see.");
  assert.equal(text, "Four.");
  assert.deepEqual(
    events.map((e) => e.type).filter((t, i, all) => t !== all[i - 1]),
    ["thinking-start", "thinking-delta", "thinking-end", "text-delta", "text-end", "done"],
  );
  assert.deepEqual(done(events).message.content, [
    { type: "thinking", thinking: "Let me see." },
    { type: "text", text: "Four." },
  ]);
});

test("reasoning_content and reasoning deltas become thinking", async () => {
  server.enqueue({ thinking: "hmm ok", text: "Yes", reasoningField: true }, { thinking: "other", text: "No", reasoningField: "reasoning" });
  for (const expected of ["hmm ok", "other"]) {
    const events = await collect(provider(), request());
    assert.equal(events[0]!.type, "thinking-start");
    assert.equal(events.flatMap((e) => (e.type === "thinking-delta" ? [e.text] : [])).join(""), expected);
    assert.equal(done(events).message.content[0]!.type, "thinking");
  }
});

test("tool calls accumulate by index across many deltas", async () => {
  const input = { path: "src/a b.ts", edits: [{ old: "x\"y", new: "ünï" }] };
  server.enqueue({ text: "Reading.", chunkSize: 1, toolCalls: [{ id: "c1", name: "edit", input }, { id: "c2", name: "read", input: {} }] });
  const events = await collect(provider(), request());
  assert.deepEqual(events.slice(-4), [
    { type: "text-end" },
    { type: "tool-call", id: "c1", name: "edit", input },
    { type: "tool-call", id: "c2", name: "read", input: {} },
    done(events),
  ]);
  assert.equal(done(events).stopReason, "tool_use");
  assert.deepEqual(done(events).message.content, [
    { type: "text", text: "Reading." },
    { type: "tool_call", id: "c1", name: "edit", input },
    { type: "tool_call", id: "c2", name: "read", input: {} },
  ]);
});

test("invalid argument JSON becomes { _raw }; a missing id is generated", async () => {
  server.enqueue({ toolCalls: [{ id: "", name: "read", rawArguments: '{"path": ' }] });
  const call = (await collect(provider(), request())).find((e) => e.type === "tool-call") as Extract<ProviderEvent, { type: "tool-call" }>;
  assert.deepEqual(call.input, { _raw: '{"path": ' });
  assert.match(call.id, /^call_0_/);
});

test("conversation mapping: tool_calls, tool messages in order before user text, no thinking", async () => {
  server.enqueue({ text: "ok" });
  const messages: Message[] = [
    user("read both"),
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "private", signature: "sig" },
        { type: "text", text: "Reading." },
        { type: "tool_call", id: "a", name: "read", input: { path: "1" } },
        { type: "tool_call", id: "b", name: "read", input: { path: "2" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "text", text: "then summarise" },
        { type: "tool_result", tool_call_id: "a", content: "one", is_error: false },
        { type: "tool_result", tool_call_id: "b", content: "no such file", is_error: true },
      ],
    },
  ];
  done(await collect(provider(), request({ messages })));
  assert.deepEqual(server.requests[0]!.body.messages.slice(1), [
    { role: "user", content: "read both" },
    {
      role: "assistant",
      content: "Reading.",
      tool_calls: [
        { id: "a", type: "function", function: { name: "read", arguments: '{"path":"1"}' } },
        { id: "b", type: "function", function: { name: "read", arguments: '{"path":"2"}' } },
      ],
    },
    { role: "tool", tool_call_id: "a", content: "one" },
    { role: "tool", tool_call_id: "b", content: "no such file" },
    { role: "user", content: "then summarise" },
  ]);
  assert.deepEqual(server.rejected, []);
});

test("tools as functions; tool_choice none keeps them; no tools means neither key", async () => {
  server.enqueue({ text: "a" }, { text: "b" }, { text: "c" });
  done(await collect(provider(), request()));
  done(await collect(provider(), request({ toolChoice: "none" })));
  done(await collect(provider(), request({ tools: [], toolChoice: "none" })));
  const [auto, none, noTools] = server.requests.map((r) => r.body);
  assert.deepEqual(auto.tools, [{ type: "function", function: { name: "read", description: "Read a file", parameters: READ_TOOL.inputSchema } }]);
  assert.equal("tool_choice" in auto, false);
  assert.equal(none.tool_choice, "none");
  assert.equal(none.tools.length, 1);
  assert.equal("tools" in noTools, false);
  assert.equal("tool_choice" in noTools, false);
});

test("a refused max_tokens is sent as max_completion_tokens", async () => {
  const strict = await startMockLLMServer({ refuse: ["max_tokens", "temperature"] });
  try {
    strict.enqueue({ text: "a" }, { text: "b" });
    done(await collect(provider({ refuses: ["temperature", "max_tokens"] }, strict.openaiBaseURL), request()));
    assert.equal(strict.requests[0]!.body.max_completion_tokens, 1000);
    assert.equal("max_tokens" in strict.requests[0]!.body, false);
    assert.equal("temperature" in strict.requests[0]!.body, false);
    const f = failure(await collect(provider({}, strict.openaiBaseURL), request()));
    assert.equal(f.retryable, false);
    assert.match(f.message, /^400 invalid_request_error: Unsupported parameter: 'max_tokens'/);
  } finally {
    await strict.close();
  }
});

test("bearer auth and extra headers arrive; an empty key still starts the client", async () => {
  server.enqueue({ text: "a" }, { text: "b" });
  done(await collect(provider({ headers: { "x-opencode-session": "ses_9" } }), request()));
  done(await collect(provider({ apiKey: "" }), request()));
  assert.equal(server.requests[0]!.headers.authorization, "Bearer test-key");
  assert.equal(server.requests[0]!.headers["x-opencode-session"], "ses_9");
  assert.equal(server.requests[1]!.headers.authorization, "Bearer no-key");
});

test("HTTP errors: 429 with retry-after and 500 retryable, 400 not", async () => {
  server.enqueue(
    { kind: "http-error", status: 429, headers: { "retry-after": "2" } },
    { kind: "http-error", status: 500 },
    { kind: "http-error", status: 400 },
  );
  assert.deepEqual(failure(await collect(provider(), request())), {
    message: "429 rate_limit_exceeded: mock HTTP 429",
    retryable: true,
    status: 429,
    retryAfterMs: 2000,
  });
  assert.equal(failure(await collect(provider(), request())).retryable, true);
  const bad = failure(await collect(provider(), request()));
  assert.deepEqual({ retryable: bad.retryable, status: bad.status }, { retryable: false, status: 400 });
});

test("an error chunk mid-stream is retryable", async () => {
  server.enqueue({ text: "partial answer", errorAfterChunks: 2 });
  const events = await collect(provider(), request());
  assert.deepEqual(events[0], { type: "text-delta", text: "partial " });
  assert.deepEqual(failure(events), { message: "server_error: The server had an error", retryable: true });
});

test("a cut stream, or one ending without finish_reason, is a retryable error", async () => {
  server.enqueue({ text: "one two three", cutAfterChunks: 2 }, { text: "one two three", endAfterChunks: 3 });
  assert.equal(failure(await collect(provider(), request())).retryable, true);
  assert.deepEqual(failure(await collect(provider(), request())), { message: "stream ended without a finish_reason", retryable: true });
});

test("abort on a stalled stream ends with error 'aborted'", { timeout: 5000 }, async () => {
  server.enqueue({ text: "never finished", stallAfterChunks: 2 });
  const controller = new AbortController();
  const events: ProviderEvent[] = [];
  for await (const e of provider().stream(request(), controller.signal)) {
    events.push(e);
    if (e.type === "text-delta") setTimeout(() => controller.abort(), 50);
  }
  assert.deepEqual(events, [
    { type: "text-delta", text: "never " },
    { type: "error", failure: { message: "aborted", retryable: false } },
  ]);
});

test("HTTP_PROXY routes requests through the proxy (http.ts)", async () => {
  server.enqueue({ text: "via proxy" });
  process.env.HTTP_PROXY = server.url;
  try {
    // The client (and its fetch) is built on the first stream, so the variable must be set by then.
    const events = await collect(provider({}, "http://llm.invalid/v1"), request());
    assert.equal(done(events).message.content[0]!.type, "text");
  } finally {
    delete process.env.HTTP_PROXY;
  }
  assert.deepEqual(server.tunnels, ["llm.invalid:80"]);
  assert.equal(server.requests[0]!.path, "/v1/chat/completions");
  assert.equal(server.requests[0]!.headers.host, "llm.invalid");
});
