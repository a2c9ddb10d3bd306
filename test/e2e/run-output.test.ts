import { test } from "node:test";
import assert from "node:assert/strict";
import { RunResultSchema } from "../../protocol/result.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox } from "./harness.js";

// Text turns of other providers and models (thinking hidden, model ids, local servers, prices) run
// in process in test/cli/run-output.test.ts; here the tool turns, the proxies and each format's process.

const server = useMockLLMServer();
// For the tests whose model answers with text only: no tool runs, the sandbox plays no role and is
// off (with bash available, every turn would warm it up: ~0.25 s of CPU per Keen).
const TEXT_ONLY = { sandbox: { mode: "off" } };

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The result with its run-dependent fields checked and replaced by fixed values. */
function normalise(result: Record<string, any>) {
  assert.deepEqual(RunResultSchema.strict().parse(result), result);
  assert.match(result.session_id, UUID7);
  assert.equal(result.opencode_session_id, result.session_id.replaceAll("-", ""));
  assert.ok(Number.isInteger(result.duration_ms) && result.duration_ms >= 0);
  return { ...result, session_id: "<id>", opencode_session_id: "<id>", duration_ms: 0 };
}

function assertServerDone() {
  assert.deepEqual(server.unexpected, []);
  assert.deepEqual(server.rejected, []);
  assert.equal(server.pending(), 0);
}

test("text prints exactly the final response's text", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ text: "Let me look.", toolCalls: [{ name: "bash", input: { command: "echo hi" } }] }, { text: "All done." });
  const r = await sb.run(["run", "--no-stdin", "say", "hi"]);
  assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 0, stdout: "All done.\n", stderr: "" });
  assertServerDone();
  assert.deepEqual(server.requests[0]!.body.messages[0], {
    role: "user",
    content: [{ type: "text", text: "say hi", cache_control: { type: "ephemeral" } }],
  });
});

test("json prints one RunResult with Anthropic usage summed over a two-step tool turn (cache included in input)", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue(
    { toolCalls: [{ name: "bash", input: { command: "echo hi" } }], usage: { input: 100, output: 20, cacheRead: 50, cacheWrite: 30 } },
    { text: "The answer is hi.", usage: { input: 7, output: 5, cacheRead: 180, cacheWrite: 12 } },
  );
  const r = await sb.run(["run", "--format", "json", "--no-stdin", "run echo"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.equal(r.stdout.endsWith("\n") && r.stdout.indexOf("\n"), r.stdout.length - 1, "exactly one line");
  const result = JSON.parse(r.stdout);
  assert.deepEqual(normalise(result), {
    session_id: "<id>",
    opencode_session_id: "<id>",
    text: "The answer is hi.",
    status: "success",
    is_error: false,
    errors: [],
    num_turns: 2,
    duration_ms: 0,
    usage: {
      input_tokens: 100 + 50 + 30 + 7 + 180 + 12,
      cached_tokens: 50 + 180,
      cache_write_tokens: 30 + 12,
      output_tokens: 25,
      reasoning_tokens: 0,
      total_tokens: 379 + 25,
    },
    // The last request's input (cache included) plus its output, against the window of an Anthropic model (200k by default).
    // An estimate at the list price (USD per million tokens: input 3, cache read 0.3, cache write 3.75, output 15).
    cost_usd: Math.round(107 * 3 + 230 * 0.3 + 42 * 3.75 + 25 * 15) / 1e6,
    context: { used: 7 + 180 + 12 + 5, window: 200_000 },
    stop_reason: "end_turn",
  });
  assertServerDone();
  const [listed] = await sb.sessions();
  assert.equal(listed!.id, result.session_id);
});

test("json with the OpenAI provider: usage normalised, reasoning counted", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue(
    { toolCalls: [{ name: "list", input: {} }], usage: { input: 40, output: 10, cacheRead: 20, reasoning: 4 } },
    { text: "Two files.", usage: { input: 60, output: 3, cacheRead: 30 } },
  );
  const r = await sb.run(["run", "--model", "openai/gpt-4.1", "--format", "json", "--no-stdin", "list files"], {
    env: { OPENAI_API_KEY: "test-openai", OPENAI_BASE_URL: server.openaiBaseURL, ANTHROPIC_API_KEY: undefined },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(normalise(JSON.parse(r.stdout)), {
    session_id: "<id>",
    opencode_session_id: "<id>",
    text: "Two files.",
    status: "success",
    is_error: false,
    errors: [],
    num_turns: 2,
    duration_ms: 0,
    usage: {
      input_tokens: 60 + 90,
      cached_tokens: 50,
      cache_write_tokens: 0,
      output_tokens: 13,
      reasoning_tokens: 4,
      total_tokens: 163,
    },
    cost_usd: (100 * 2 + 50 * 0.5 + 13 * 8) / 1e6,
    context: { used: 90 + 3, window: 1_047_576 },
    stop_reason: "end_turn",
  });
  assertServerDone();
  assert.deepEqual(server.requests.map((q) => [q.vendor, q.body.model, q.headers.authorization]), [
    ["openai", "gpt-4.1", "Bearer test-openai"],
    ["openai", "gpt-4.1", "Bearer test-openai"],
  ]);
});

test("a new session is titled by the prompt's first line and listed with its short id and status success", async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  server.enqueue({ text: "ok" });
  const r = await sb.run(["run", "--format", "json", "--no-stdin", "First line here\nsecond line"]);
  assert.equal(r.code, 0, r.stderr);
  const id = JSON.parse(r.stdout).session_id;
  const listed = await sb.run(["sessions", "list", "--all", "--json"]);
  const [meta, ...rest] = JSON.parse(listed.stdout);
  assert.deepEqual(rest, []);
  assert.deepEqual({ ...meta, created: 0, updated: 0 }, {
    id, title: "First line here", cwd: sb.workspace, model: "anthropic/claude-sonnet-5-5", created: 0, updated: 0, status: "success",
    short_id: id.slice(0, 8),
  });
  assert.equal(server.requests.length, 1, "no extra model request for the title");
});

test("HTTPS_PROXY / HTTP_PROXY are honoured, NO_PROXY bypasses them", async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  server.enqueue({ text: "via proxy" }, { text: "direct" });
  const target = "http://keen-e2e.invalid:4321";
  const proxied = await sb.run(["run", "--no-stdin", "hi"], { env: { ANTHROPIC_BASE_URL: target, HTTP_PROXY: server.url } });
  assert.deepEqual({ code: proxied.code, stdout: proxied.stdout }, { code: 0, stdout: "via proxy\n" }, proxied.stderr);
  assert.deepEqual(server.tunnels, ["keen-e2e.invalid:4321"]);
  const bypass = await sb.run(["run", "--no-stdin", "hi"], { env: { HTTPS_PROXY: "http://127.0.0.1:9", NO_PROXY: "127.0.0.1" } });
  assert.deepEqual({ code: bypass.code, stdout: bypass.stdout }, { code: 0, stdout: "direct\n" }, bypass.stderr);
  assert.deepEqual(server.tunnels, ["keen-e2e.invalid:4321"]);
  assertServerDone();
});
