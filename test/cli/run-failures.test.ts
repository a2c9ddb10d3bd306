import { test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../storage/level-store.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";
import { failed, resultOf } from "./run-failures-checks.js";

// Provider failures and retries of `keen run`, in this process (test/cli/in-process.ts): what Keen
// decides (retry or not, which attempt's text counts, the result and messages it prints).
// test/e2e/run-failures.test.ts keeps a spawned 400 (exit code, stdout/stderr split), --timeout,
// the signals and the closed pipe.

const server = useMockLLMServer();

const RETRY = { retry: { maxRetries: 1, baseDelayMs: 10 } };
// Text-only turns: no tool runs, so the sandbox plays no role (and must not warm up in this process).
const run = ["run", "--no-stdin", "--sandbox", "off"];

test("a provider 401 in text format: nothing on stdout, the error and how to continue on stderr, exit 1", async () => {
  const sb = makeInProcessSandbox(server, RETRY);
  server.enqueue({ kind: "http-error", status: 401 });
  const text = await sb.keen([...run, "hi"]);
  assert.deepEqual({ code: text.code, stdout: text.stdout }, { code: 1, stdout: "" });
  const [meta] = await sb.sessions();
  assert.equal(meta!.status, "error");
  const session = meta!.id;
  assert.equal(text.stderr, `keen: error: 401 authentication_error: mock HTTP 401\nkeen: failed · session ${session} · continue with: keen run -s ${session} "…" (or keen run -c in this directory)\n`);
  assert.equal(server.requests.length, 1, "a 401 is not retried");
});

test("429 with retry-after, then a cut stream, then success: retried, only the good attempt's text counts", async () => {
  const sb = makeInProcessSandbox(server);
  server.enqueue(
    { kind: "http-error", status: 429, headers: { "retry-after": "0" } },
    { text: "Broken attempt text that must vanish", cutAfterChunks: 5 },
    { text: "Good answer.", usage: { input: 10, output: 3 } },
  );
  const r = await sb.keen([...run, "--format", "json", "hi"]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(resultOf(r.stdout), {
    session_id: "<id>", opencode_session_id: "<id>", text: "Good answer.", status: "success", is_error: false,
    errors: [], num_turns: 1, duration_ms: 0,
    usage: { input_tokens: 10, cached_tokens: 0, cache_write_tokens: 0, output_tokens: 3, reasoning_tokens: 0, total_tokens: 13 },
    cost_usd: 0.000075, context: { used: 13, window: 200_000 }, stop_reason: "end_turn",
  });
  assert.equal(server.requests.length, 3);
  assert.deepEqual(server.unexpected, []);
  const retries = r.stderr.split("\n").filter(Boolean);
  assert.equal(retries.length, 2, r.stderr);
  assert.match(retries[0]!, /^keen: retrying in 0\.0s \(attempt 2\): 429 rate_limit_error/);
  assert.match(retries[1]!, /^keen: retrying in [\d.]+s \(attempt 3\): /);
  const events = await openStore(sb.home).load(JSON.parse(r.stdout).session_id);
  assert.deepEqual(events.filter((e: any) => e.kind === "text" && e.role === "assistant").map((e: any) => e.content), ["Good answer."]);
});

test("5xx until retries are exhausted → exit 1 with the last error", async () => {
  const sb = makeInProcessSandbox(server, RETRY);
  server.enqueue({ kind: "http-error", status: 500 }, { kind: "http-error", status: 529 });
  const r = await sb.keen([...run, "--format", "json", "hi"]);
  assert.equal(r.code, 1);
  assert.deepEqual(resultOf(r.stdout), failed(["529 overloaded_error: mock HTTP 529"]));
  assert.equal(server.requests.length, 2);
  assert.equal(server.pending(), 0);
});

test("an in-stream overloaded error is retried", async () => {
  const sb = makeInProcessSandbox(server, RETRY);
  server.enqueue({ text: "half of it", errorAfterChunks: 4 }, { text: "whole answer" });
  const r = await sb.keen([...run, "hi"]);
  assert.deepEqual({ code: r.code, stdout: r.stdout }, { code: 0, stdout: "whole answer\n" });
  assert.equal(server.requests.length, 2);
});

test("the stall watchdog aborts a silent stream and retries it", async () => {
  const sb = makeInProcessSandbox(server, { retry: { maxRetries: 1, baseDelayMs: 10, idleTimeoutMs: 1000 } });
  server.enqueue({ text: "never finished", stallAfterChunks: 4 }, { text: "after the stall" });
  const r = await sb.keen([...run, "hi"]);
  assert.deepEqual({ code: r.code, stdout: r.stdout }, { code: 0, stdout: "after the stall\n" });
  assert.match(r.stderr, /^keen: retrying in [\d.]+s \(attempt 2\): stream stalled: no data for [\d.]+s\n$/);
  assert.equal(server.requests.length, 2);
  assert.equal(server.pending(), 0);
});
