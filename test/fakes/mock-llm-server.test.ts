import assert from "node:assert/strict";
import { after, before, beforeEach, test } from "node:test";
import { startMockLLMServer, type MockLLMServer } from "./mock-llm-server.js";

let server: MockLLMServer;
before(async () => void (server = await startMockLLMServer()));
after(() => server.close());
beforeEach(() => server.reset());

async function post(path: string, body: unknown): Promise<{ status: number; text: string; json?: any }> {
  const res = await fetch(server.url + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    // An SSE body.
  }
  return { status: res.status, text, json };
}

/** The data payloads of an SSE body, with their event names. */
function events(sse: string): { event?: string; data: any }[] {
  return sse
    .split("\n\n")
    .filter((frame) => frame.trim() !== "")
    .map((frame) => {
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)![1]!;
      return { event, data: data === "[DONE]" ? "[DONE]" : JSON.parse(data) };
    });
}

const ANTHROPIC_OK = { model: "m", max_tokens: 100, stream: true, messages: [{ role: "user", content: "hi" }] };
const OPENAI_OK = { model: "m", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] };
const TOOLS = [{ name: "read", input_schema: { type: "object" } }];
const THINKING = { type: "enabled", budget_tokens: 1024 };
const toolUse = (id: string) => ({ type: "tool_use", id, name: "read", input: {} });
const toolResult = (id: string) => ({ type: "tool_result", tool_use_id: id, content: "x" });

test("Anthropic wire format: events, realistic cumulative usage, stop reason", async () => {
  server.enqueue({ thinking: "hm", signature: "sig", text: "Hi you", toolCalls: [{ id: "t1", name: "read", input: { a: 1 } }], usage: { input: 7, output: 9, cacheRead: 3, cacheWrite: 2 } });
  const res = await post("/v1/messages", ANTHROPIC_OK);
  const evs = events(res.text);
  assert.deepEqual(
    evs.map((e) => e.event),
    ["message_start", "ping", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
     "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
     "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"],
  );
  assert.ok(evs.every((e) => e.event === e.data.type));
  assert.deepEqual(evs[0]!.data.message.usage, { input_tokens: 7, cache_creation_input_tokens: 2, cache_read_input_tokens: 3, output_tokens: 1 });
  assert.deepEqual(evs[4]!.data.delta, { type: "signature_delta", signature: "sig" });
  assert.deepEqual(evs[10]!.data.content_block, { type: "tool_use", id: "t1", name: "read", input: {} });
  assert.equal(evs.filter((e) => e.data.delta?.type === "input_json_delta").map((e) => e.data.delta.partial_json).join(""), '{"a":1}');
  assert.deepEqual(evs[14]!.data.delta, { stop_reason: "tool_use", stop_sequence: null });
  assert.equal(evs[14]!.data.usage.output_tokens, 9);
  assert.equal(server.requests[0]!.vendor, "anthropic");
});

test("OpenAI wire format: chunks, finish_reason, usage chunk only when asked, [DONE]", async () => {
  server.enqueue({ text: "Hi", toolCalls: [{ id: "c1", name: "read", input: {} }], usage: { input: 5, cacheRead: 5, output: 2, reasoning: 1 } }, { text: "Hi" });
  const evs = events((await post("/v1/chat/completions", OPENAI_OK)).text).map((e) => e.data);
  assert.deepEqual(evs[0].choices[0].delta, { role: "assistant", content: "" });
  assert.deepEqual(evs[2].choices[0].delta.tool_calls[0], { index: 0, id: "c1", type: "function", function: { name: "read", arguments: "" } });
  assert.equal(evs.at(-3).choices[0].finish_reason, "tool_calls");
  assert.deepEqual(evs.at(-2).usage, {
    prompt_tokens: 10,
    completion_tokens: 2,
    total_tokens: 12,
    prompt_tokens_details: { cached_tokens: 5 },
    completion_tokens_details: { reasoning_tokens: 1 },
  });
  assert.equal(evs.at(-1), "[DONE]");
  const plain = events((await post("/v1/chat/completions", { ...OPENAI_OK, stream_options: undefined })).text).map((e) => e.data);
  assert.equal(plain.at(-2).choices[0].finish_reason, "stop");
  assert.ok(plain.every((c) => c === "[DONE]" || c.usage === undefined));
});

test("steps are consumed one per request across vendors; empty queue → 500 + unexpected", async () => {
  server.enqueue({ text: "a" }, { text: "b" });
  assert.equal(server.pending(), 2);
  assert.equal((await post("/v1/chat/completions", OPENAI_OK)).status, 200);
  assert.equal((await post("/v1/messages", ANTHROPIC_OK)).status, 200);
  assert.equal(server.pending(), 0);
  const empty = await post("/v1/messages", ANTHROPIC_OK);
  assert.equal(empty.status, 500);
  assert.equal(empty.json.error.type, "api_error");
  assert.equal((await post("/v1/embeddings", {})).status, 404);
  assert.deepEqual(server.unexpected, ["POST /v1/messages: no scripted step left", "POST /v1/embeddings: unknown endpoint"]);
  assert.equal(server.requests.length, 4);
});

test("setFallback answers requests beyond the queue with its step, not a 500; reset turns it off", async () => {
  server.enqueue({ text: "queued" });
  server.setFallback({ text: "fallback" });
  const texts: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await post("/v1/messages", ANTHROPIC_OK);
    assert.equal(res.status, 200);
    texts.push(events(res.text).filter((e) => e.data.delta?.type === "text_delta").map((e) => e.data.delta.text).join(""));
  }
  assert.deepEqual(texts, ["queued", "fallback", "fallback"]);
  assert.deepEqual(server.unexpected, []);
  server.reset();
  assert.equal((await post("/v1/messages", ANTHROPIC_OK)).status, 500);
  assert.equal(server.unexpected.length, 1);
});

test("http-error steps answer with the vendor's error JSON and headers", async () => {
  server.enqueue({ kind: "http-error", status: 529, headers: { "retry-after": "3" } }, { kind: "http-error", status: 429 });
  const res = await fetch(server.url + "/v1/messages", { method: "POST", body: JSON.stringify(ANTHROPIC_OK) });
  assert.equal(res.status, 529);
  assert.equal(res.headers.get("retry-after"), "3");
  assert.deepEqual(await res.json(), { type: "error", error: { type: "overloaded_error", message: "mock HTTP 529" } });
  const openai = await post("/v1/chat/completions", OPENAI_OK);
  assert.deepEqual(openai.json, { error: { message: "mock HTTP 429", type: "rate_limit_exceeded", param: null, code: null } });
});

test("stampDeltas sends timestamped text deltas", async () => {
  server.enqueue({ stampDeltas: true, stampCount: 3, delayMs: 20 });
  const before = performance.timeOrigin + performance.now();
  const text = events((await post("/v1/chat/completions", OPENAI_OK)).text)
    .flatMap((e) => (e.data !== "[DONE]" && e.data.choices[0]?.delta.content ? [e.data.choices[0].delta.content] : []))
    .join("");
  const stamps = [...text.matchAll(/@([\d.]+);/g)].map((m) => Number(m[1]));
  assert.equal(stamps.length, 3);
  assert.ok(stamps[0]! >= before && stamps[2]! > stamps[1]! && stamps[1]! > stamps[0]!, String(stamps));
});

test("cutAfterChunks destroys the socket; endAfterChunks truncates cleanly; errorAfterChunks sends an error event", async () => {
  server.enqueue({ text: "a b c", cutAfterChunks: 2 }, { text: "a b c", endAfterChunks: 2 }, { text: "a b c", errorAfterChunks: 3 });
  await assert.rejects(post("/v1/messages", ANTHROPIC_OK));
  assert.deepEqual(events((await post("/v1/messages", ANTHROPIC_OK)).text).map((e) => e.event), ["message_start", "ping"]);
  const errored = events((await post("/v1/messages", ANTHROPIC_OK)).text);
  assert.deepEqual(errored.at(-1), { event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } });
});

test("stallAfterChunks keeps the response open until the client gives up", { timeout: 5000 }, async () => {
  server.enqueue({ text: "a b c", stallAfterChunks: 1 });
  const controller = new AbortController();
  const res = await fetch(server.url + "/v1/messages", { method: "POST", body: JSON.stringify(ANTHROPIC_OK), signal: controller.signal });
  const reader = res.body!.getReader();
  assert.match(new TextDecoder().decode((await reader.read()).value), /message_start/);
  const next = reader.read();
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(next, /abort/i);
});

/** Each validation rule: the request is refused with the vendor's message, recorded, and consumes no step. */
const RULES: { name: string; path: string; body: unknown; message: RegExp | string }[] = [
  { name: "anthropic: stream must be true", path: "/v1/messages", body: { ...ANTHROPIC_OK, stream: false }, message: /always streams/ },
  {
    name: "anthropic: tool blocks need tools",
    path: "/v1/messages",
    body: { ...ANTHROPIC_OK, tools: [], messages: [{ role: "user", content: "q" }, { role: "assistant", content: [toolUse("t")] }, { role: "user", content: [toolResult("t")] }] },
    message: "Requests which include `tool_use` or `tool_result` blocks must define tools.",
  },
  {
    name: "anthropic: with thinking, the last assistant tool turn starts with thinking",
    path: "/v1/messages",
    body: { ...ANTHROPIC_OK, max_tokens: 2000, thinking: THINKING, tools: TOOLS, messages: [{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "text", text: "x" }, toolUse("t")] }, { role: "user", content: [toolResult("t")] }] },
    message: /^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `text`\. When `thinking` is enabled, a final `assistant` message must start with a thinking block/,
  },
  {
    name: "anthropic: thinking with forced tool_choice",
    path: "/v1/messages",
    body: { ...ANTHROPIC_OK, max_tokens: 2000, thinking: THINKING, tools: TOOLS, tool_choice: { type: "any" } },
    message: "Thinking may not be enabled when tool_choice forces tool use.",
  },
  {
    name: "anthropic: tool_result without tool_use in the previous message",
    path: "/v1/messages",
    body: { ...ANTHROPIC_OK, tools: TOOLS, messages: [{ role: "user", content: "q" }, { role: "assistant", content: [toolUse("t")] }, { role: "user", content: [toolResult("t"), toolResult("zzz")] }] },
    message: /^messages\.2\.content\.1: unexpected `tool_use_id` found in `tool_result` blocks: zzz/,
  },
  {
    name: "anthropic: tool_use not answered in the next message",
    path: "/v1/messages",
    body: { ...ANTHROPIC_OK, tools: TOOLS, messages: [{ role: "user", content: "q" }, { role: "assistant", content: [toolUse("t1"), toolUse("t2")] }, { role: "user", content: [toolResult("t1")] }] },
    message: /^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: t2/,
  },
  {
    name: "anthropic: thinking block without signature",
    path: "/v1/messages",
    body: { ...ANTHROPIC_OK, messages: [{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "thinking", thinking: "t" }, { type: "text", text: "a" }] }, { role: "user", content: "r" }] },
    message: "messages.1.content.0.thinking.signature: Field required",
  },
  {
    name: "anthropic: cache_control on a thinking block",
    path: "/v1/messages",
    body: { ...ANTHROPIC_OK, messages: [{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "thinking", thinking: "t", signature: "s", cache_control: { type: "ephemeral" } }] }, { role: "user", content: "r" }] },
    message: "messages.1.content.0.thinking.cache_control: Extra inputs are not permitted",
  },
  {
    name: "anthropic: empty text block",
    path: "/v1/messages",
    body: { ...ANTHROPIC_OK, messages: [{ role: "user", content: [{ type: "text", text: "" }] }] },
    message: "messages: text content blocks must be non-empty",
  },
  {
    name: "anthropic: at most 4 cache_control blocks",
    path: "/v1/messages",
    body: { ...ANTHROPIC_OK, system: [1, 2, 3, 4, 5].map((n) => ({ type: "text", text: `s${n}`, cache_control: { type: "ephemeral" } })) },
    message: "A maximum of 4 blocks with cache_control may be provided. Found 5.",
  },
  {
    name: "anthropic: budget_tokens at least 1024",
    path: "/v1/messages",
    body: { ...ANTHROPIC_OK, thinking: { type: "enabled", budget_tokens: 10 } },
    message: "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
  },
  {
    name: "anthropic: max_tokens above budget_tokens",
    path: "/v1/messages",
    body: { ...ANTHROPIC_OK, max_tokens: 1024, thinking: THINKING },
    message: /^`max_tokens` must be greater than `thinking.budget_tokens`/,
  },
  { name: "openai: stream must be true", path: "/v1/chat/completions", body: { ...OPENAI_OK, stream: undefined }, message: /always streams/ },
  {
    name: "openai: tool_choice without tools",
    path: "/v1/chat/completions",
    body: { ...OPENAI_OK, tool_choice: "none" },
    message: "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
  },
  { name: "openai: tools: []", path: "/v1/chat/completions", body: { ...OPENAI_OK, tools: [] }, message: "[] is too short - 'tools'" },
  {
    name: "openai: tool message without a matching tool_call",
    path: "/v1/chat/completions",
    body: { ...OPENAI_OK, messages: [{ role: "user", content: "q" }, { role: "tool", tool_call_id: "c1", content: "x" }] },
    message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
  },
  {
    name: "openai: tool_calls not all answered",
    path: "/v1/chat/completions",
    body: {
      ...OPENAI_OK,
      tools: [{ type: "function", function: { name: "read", parameters: {} } }],
      messages: [
        { role: "user", content: "q" },
        { role: "assistant", content: null, tool_calls: ["c1", "c2"].map((id) => ({ id, type: "function", function: { name: "read", arguments: "{}" } })) },
        { role: "tool", tool_call_id: "c1", content: "x" },
        { role: "user", content: "more" },
      ],
    },
    message: /The following tool_call_ids did not have response messages: c2$/,
  },
];

for (const rule of RULES) {
  test(`validation — ${rule.name}`, async () => {
    server.enqueue({ text: "unused" });
    const res = await post(rule.path, rule.body);
    assert.equal(res.status, 400, res.text);
    const message: string = res.json.error.message;
    if (typeof rule.message === "string") assert.equal(message, rule.message);
    else assert.match(message, rule.message);
    assert.equal(res.json.error.type, "invalid_request_error");
    assert.deepEqual(server.rejected, [{ path: rule.path, message }]);
    assert.equal(server.requests.length, 1);
    assert.equal(server.pending(), 1);
  });
}

test("validation — valid tool loops pass (thinking first, every id answered)", async () => {
  server.enqueue({ text: "a" }, { text: "b" });
  const anthropic = await post("/v1/messages", {
    ...ANTHROPIC_OK,
    max_tokens: 2000,
    thinking: THINKING,
    tools: TOOLS,
    tool_choice: { type: "auto" },
    messages: [
      { role: "user", content: "q" },
      { role: "assistant", content: [{ type: "thinking", thinking: "t", signature: "s" }, toolUse("t1")] },
      { role: "user", content: [toolResult("t1")] },
    ],
  });
  assert.equal(anthropic.status, 200, anthropic.text);
  const openai = await post("/v1/chat/completions", {
    ...OPENAI_OK,
    tools: [{ type: "function", function: { name: "read", parameters: {} } }],
    tool_choice: "none",
    messages: [
      { role: "user", content: "q" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "x" },
    ],
  });
  assert.equal(openai.status, 200, openai.text);
  assert.deepEqual(server.rejected, []);
});

test("server-wide refuse option rejects named OpenAI parameters", async () => {
  const strict = await startMockLLMServer({ refuse: ["temperature"] });
  try {
    const res = await fetch(strict.openaiBaseURL + "/chat/completions", { method: "POST", body: JSON.stringify({ ...OPENAI_OK, temperature: 0 }) });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as any).error.message, "Unsupported parameter: 'temperature' is not supported with this model.");
  } finally {
    await strict.close();
  }
});
