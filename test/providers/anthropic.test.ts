import assert from "node:assert/strict";
import { test } from "node:test";
import type { Message } from "../../protocol/messages.js";
import type { Provider, ProviderEvent } from "../../protocol/provider.js";
import { createAnthropicProvider } from "../../app/providers/anthropic.js";
import type { ProviderOptions } from "../../app/providers/options.js";
import { startMockLLMServer } from "../fakes/mock-llm-server.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { collect, done, failure, READ_TOOL, request, user } from "./stream-helpers.js";

const server = useMockLLMServer();

function provider(extra: Partial<ProviderOptions> = {}): Provider {
  return createAnthropicProvider({ kind: "anthropic", model: "claude-test", baseURL: server.anthropicBaseURL, apiKey: "test-key", maxOutputTokens: 4096, ...extra });
}

test("streams text with whole event sequence, message and normalised usage", async () => {
  server.enqueue({ text: "Hello there world", usage: { input: 5, cacheRead: 100, cacheWrite: 20, output: 30 } });
  const events = await collect(provider(), request());
  assert.deepEqual(events, [
    { type: "text-delta", text: "Hello " },
    { type: "text-delta", text: "there " },
    { type: "text-delta", text: "world" },
    { type: "text-end" },
    {
      type: "done",
      message: { role: "assistant", content: [{ type: "text", text: "Hello there world" }] },
      // The mock repeats the input numbers in message_delta, as the real API does: not summed.
      usage: { input_tokens: 125, cached_tokens: 100, cache_write_tokens: 20, output_tokens: 30, reasoning_tokens: 0, total_tokens: 155 },
      stopReason: "end_turn",
    },
  ]);
  assert.deepEqual(server.unexpected, []);
});

test("thinking with signature is streamed and sent back unchanged", async () => {
  server.enqueue(
    { thinking: "I should read it", signature: "sig-abc", toolCalls: [{ id: "toolu_1", name: "read", input: { path: "a.txt" } }] },
    { thinking: "Now answer", text: "It says hi" },
  );
  const p = provider({ thinkingBudget: 2048 });
  const first = await collect(p, request());
  assert.deepEqual(first.slice(0, 6), [
    { type: "thinking-start" },
    { type: "thinking-delta", text: "I " },
    { type: "thinking-delta", text: "should " },
    { type: "thinking-delta", text: "read " },
    { type: "thinking-delta", text: "it" },
    { type: "thinking-end" },
  ]);
  assert.deepEqual(first[6], { type: "tool-call", id: "toolu_1", name: "read", input: { path: "a.txt" } });
  const step = done(first);
  assert.equal(step.stopReason, "tool_use");
  assert.deepEqual(step.message.content[0], { type: "thinking", thinking: "I should read it", signature: "sig-abc" });

  const toolResult: Message = { role: "user", content: [{ type: "tool_result", tool_call_id: "toolu_1", content: "hi", is_error: false }] };
  const second = await collect(p, request({ messages: [user("read a.txt"), step.message, toolResult] }));
  assert.equal(done(second).stopReason, "end_turn");
  const sent = server.requests[1]!.body;
  assert.deepEqual(sent.messages[1].content[0], { type: "thinking", thinking: "I should read it", signature: "sig-abc" });
  assert.deepEqual(sent.thinking, { type: "enabled", budget_tokens: 2048 });
  assert.deepEqual(server.rejected, []);
});

test("thinking without a signature is dropped, not sent", async () => {
  server.enqueue({ text: "ok" });
  const assistant: Message = {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "from another provider" },
      { type: "text", text: "earlier answer" },
    ],
  };
  done(await collect(provider(), request({ messages: [user("q"), assistant, user("again")] })));
  assert.deepEqual(server.requests[0]!.body.messages[1].content, [{ type: "text", text: "earlier answer" }]);
});

test("redacted thinking is kept in the message and sent back", async () => {
  server.enqueue({ thinking: "visible", redactedThinking: "ENCRYPTED", text: "answer" }, { text: "next" });
  const p = provider({ thinkingBudget: 1024 });
  const step = done(await collect(p, request()));
  assert.deepEqual(step.message.content.map((b) => b.type), ["thinking", "redacted_thinking", "text"]);
  assert.deepEqual(step.message.content[1], { type: "redacted_thinking", data: "ENCRYPTED" });
  done(await collect(p, request({ messages: [user("q"), step.message, user("more")] })));
  assert.deepEqual(server.requests[1]!.body.messages[1].content[1], { type: "redacted_thinking", data: "ENCRYPTED" });
});

test("tool input split across many deltas is parsed once at block end", async () => {
  const input = { path: "src/a b.ts", edits: [{ old: "x\"y", new: "ünï" }], n: 3 };
  server.enqueue({ chunkSize: 1, toolCalls: [{ id: "t1", name: "edit", input }, { id: "t2", name: "read", input: {} }] });
  const events = await collect(provider(), request());
  assert.deepEqual(
    events.filter((e) => e.type === "tool-call"),
    [
      { type: "tool-call", id: "t1", name: "edit", input },
      { type: "tool-call", id: "t2", name: "read", input: {} },
    ],
  );
  assert.deepEqual(done(events).message.content, [
    { type: "tool_call", id: "t1", name: "edit", input },
    { type: "tool_call", id: "t2", name: "read", input: {} },
  ]);
});

test("invalid tool JSON becomes { _raw }", async () => {
  server.enqueue({ toolCalls: [{ id: "t1", name: "read", rawArguments: '{"path": "a' }] });
  const events = await collect(provider(), request());
  assert.deepEqual(events.find((e) => e.type === "tool-call"), { type: "tool-call", id: "t1", name: "read", input: { _raw: '{"path": "a' } });
});

test("cache_control on system, last tool and last block of the last message only", async () => {
  server.enqueue({ text: "done" });
  const tools = [READ_TOOL, { ...READ_TOOL, name: "write" }];
  const messages: Message[] = [
    user("read both"),
    {
      role: "assistant",
      content: [
        { type: "tool_call", id: "a", name: "read", input: { path: "1" } },
        { type: "tool_call", id: "b", name: "read", input: { path: "2" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "text", text: "and then?" },
        { type: "tool_result", tool_call_id: "a", content: "one", is_error: false },
        { type: "tool_result", tool_call_id: "b", content: "", is_error: true },
      ],
    },
  ];
  done(await collect(provider(), request({ tools, messages })));
  const body = server.requests[0]!.body;
  assert.deepEqual(body.system, [{ type: "text", text: "You are Keen.", cache_control: { type: "ephemeral" } }]);
  assert.deepEqual(body.tools.map((t: any) => t.cache_control), [undefined, { type: "ephemeral" }]);
  assert.equal(JSON.stringify(body.messages).split("cache_control").length - 1, 1);
  // Tool results go first in a user turn; the marker sits on the last block.
  assert.deepEqual(body.messages[2].content, [
    { type: "tool_result", tool_use_id: "a", content: "one", is_error: false },
    { type: "tool_result", tool_use_id: "b", content: "Error", is_error: true },
    { type: "text", text: "and then?", cache_control: { type: "ephemeral" } },
  ]);
  assert.deepEqual(body.messages[1].content[0], { type: "tool_use", id: "a", name: "read", input: { path: "1" } });
});

test("tool_choice none keeps the tools; no tools means neither tools nor tool_choice", async () => {
  server.enqueue({ text: "a" }, { text: "b" }, { text: "c" });
  done(await collect(provider(), request({ toolChoice: "none" })));
  done(await collect(provider(), request({ tools: [] })));
  done(await collect(provider(), request({ tools: [], toolChoice: "none" })));
  const [withNone, noTools, noToolsNone] = server.requests.map((r) => r.body);
  assert.equal(withNone.tools.length, 1);
  assert.deepEqual(withNone.tool_choice, { type: "none" });
  for (const body of [noTools, noToolsNone]) {
    assert.equal("tools" in body, false);
    assert.equal("tool_choice" in body, false);
  }
});

test("thinking budget forces max_tokens above it", async () => {
  server.enqueue({ text: "a" });
  done(await collect(provider({ thinkingBudget: 8000, maxOutputTokens: 4000 }), request()));
  assert.equal(server.requests[0]!.body.max_tokens, 12000);
});

test("auth styles: x-api-key (default) and bearer; extra headers arrive", async () => {
  server.enqueue({ text: "a" }, { text: "b" });
  done(await collect(provider({ headers: { "x-opencode-session": "ses_1" } }), request()));
  done(await collect(provider({ authStyle: "bearer" }), request()));
  const [apiKey, bearer] = server.requests.map((r) => r.headers);
  assert.equal(apiKey!["x-api-key"], "test-key");
  assert.equal(apiKey!["anthropic-version"], "2023-06-01");
  assert.equal(apiKey!.authorization, undefined);
  assert.equal(apiKey!["x-opencode-session"], "ses_1");
  assert.equal(bearer!.authorization, "Bearer test-key");
  assert.equal(bearer!["x-api-key"], undefined);
  assert.notEqual(bearer!["anthropic-version"], "2023-06-01");
});

test("HTTP 429 with retry-after / retry-after-ms is retryable with retryAfterMs; 529 too", async () => {
  server.enqueue(
    { kind: "http-error", status: 429, headers: { "retry-after": "7" } },
    { kind: "http-error", status: 429, headers: { "retry-after-ms": "1500" } },
    { kind: "http-error", status: 529 },
  );
  const limited = failure(await collect(provider(), request()));
  assert.deepEqual({ ...limited, message: "" }, { message: "", retryable: true, status: 429, retryAfterMs: 7000 });
  assert.equal(limited.message, "429 rate_limit_error: mock HTTP 429");
  assert.equal(failure(await collect(provider(), request())).retryAfterMs, 1500);
  const overloaded = failure(await collect(provider(), request()));
  assert.deepEqual({ ...overloaded, message: "" }, { message: "", retryable: true, status: 529 });
  assert.equal(server.pending(), 0);
});

test("retry-after as an HTTP date", async () => {
  server.enqueue({ kind: "http-error", status: 503, headers: { "retry-after": new Date(Date.now() + 60_000).toUTCString() } });
  const f = failure(await collect(provider(), request()));
  assert.equal(f.retryable, true);
  assert.ok(f.retryAfterMs! > 50_000 && f.retryAfterMs! <= 60_000, String(f.retryAfterMs));
});

test("400 and 401 are not retryable", async () => {
  server.enqueue({ kind: "http-error", status: 400 }, { kind: "http-error", status: 401 });
  const bad = failure(await collect(provider(), request()));
  assert.equal(bad.retryable, false);
  assert.equal(bad.status, 400);
  assert.match(bad.message, /mock HTTP 400/);
  assert.equal(failure(await collect(provider(), request())).retryable, false);
});

test("a request the real API refuses surfaces the vendor message, not retryable", async () => {
  const messages: Message[] = [user("q"), { role: "assistant", content: [{ type: "tool_call", id: "x", name: "read", input: {} }] }];
  const f = failure(await collect(provider(), request({ tools: [], messages })));
  assert.equal(f.retryable, false);
  assert.match(f.message, /must define tools/);
});

test("overloaded_error mid-stream is retryable, after the text already streamed", async () => {
  server.enqueue({ text: "partial answer", errorAfterChunks: 4 });
  const events = await collect(provider(), request());
  assert.deepEqual(events[0], { type: "text-delta", text: "partial " });
  const f = failure(events);
  assert.equal(f.retryable, true);
  assert.equal(f.message, "overloaded_error: Overloaded");
});

test("a cut or truncated stream is a retryable error", async () => {
  server.enqueue({ text: "one two three", cutAfterChunks: 4 }, { text: "one two three", endAfterChunks: 5 });
  assert.equal(failure(await collect(provider(), request())).retryable, true);
  const truncated = failure(await collect(provider(), request()));
  // message_start reported the input tokens: the failure carries what the request cost so far.
  const usage = { input_tokens: 10, cached_tokens: 0, cache_write_tokens: 0, output_tokens: 1, reasoning_tokens: 0, total_tokens: 11 };
  assert.deepEqual(truncated, { message: "stream ended before message_stop", retryable: true, usage });
});

test("connection refused is a retryable error", async () => {
  const closed = await startMockLLMServer();
  await closed.close();
  const p = createAnthropicProvider({ kind: "anthropic", model: "m", baseURL: closed.url, apiKey: "k", maxOutputTokens: 10 });
  const f = failure(await collect(p, request()));
  assert.equal(f.retryable, true);
  assert.match(f.message, /ECONNREFUSED|Connection error/);
});

test("abort mid-stream on a stalled server ends with error 'aborted'", { timeout: 5000 }, async () => {
  server.enqueue({ text: "never finished", stallAfterChunks: 4 });
  const controller = new AbortController();
  const events: ProviderEvent[] = [];
  for await (const e of provider().stream(request(), controller.signal)) {
    events.push(e);
    // The stream hangs after the first delta; only the abort can end it.
    if (e.type === "text-delta") setTimeout(() => controller.abort(), 50);
  }
  assert.deepEqual(events, [
    { type: "text-delta", text: "never " },
    {
      type: "error",
      failure: {
        message: "aborted", retryable: false,
        usage: { input_tokens: 10, cached_tokens: 0, cache_write_tokens: 0, output_tokens: 1, reasoning_tokens: 0, total_tokens: 11 },
      },
    },
  ]);
});

test("an already aborted signal sends nothing", async () => {
  const controller = new AbortController();
  controller.abort();
  assert.deepEqual(await collect(provider(), request(), controller.signal), [
    { type: "error", failure: { message: "aborted", retryable: false } },
  ]);
  assert.equal(server.requests.length, 0);
});
