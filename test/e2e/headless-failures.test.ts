import { test } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";
import { assertProtocolStream, joinDeltas, kindSequence } from "./protocol-check.js";

const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();
// For the tests whose model answers with text only: no tool runs, the sandbox plays no role and is
// off (with bash available, every turn would warm it up: ~0.25 s of CPU per Keen).
const TEXT_ONLY = { sandbox: { mode: "off" } };

const headless = (...args: string[]) => ["run", "--headless", "--stream-deltas", "--model", MODEL, ...args];

// The retried attempts (which attempt a delta belongs to) and --timeout run in process:
// test/cli/headless-failures.test.ts. Here the process's side: exit codes, the stdout/stderr split, signals.
test("a provider failure: error line, then result with is_error, exit 1", async () => {
  server.enqueue({ kind: "http-error", status: 400, body: { type: "error", error: { type: "invalid_request_error", message: "prompt is too long" } } });
  const sb = makeSandbox(server.url, TEXT_ONLY);
  const r = await sb.run(headless("answer"));
  assert.equal(r.code, 1);
  const lines = parseLines(r.stdout);
  const result = assertProtocolStream(lines, { deltas: true });
  assert.deepEqual(kindSequence(lines), ["session-start", "text", "error", "result"]);
  assert.match(lines[2]!.message, /prompt is too long/);
  assert.equal(result.status, "error");
  assert.equal(result.is_error, true);
  assert.deepEqual(result.errors, [lines[2]!.message]);
  assert.match(r.stderr, /prompt is too long/);
  assert.equal(server.requests.length, 1, "a 400 is not retried");
});

/** Sends `signal` once the first text-delta line has been read. */
function signalAfterFirstDelta(signal: NodeJS.Signals) {
  return (child: ChildProcess) => {
    let seen = "";
    const onData = (d: string) => {
      seen += d;
      if (!seen.includes('"kind":"text-delta"')) return;
      child.stdout!.off("data", onData);
      child.kill(signal);
    };
    child.stdout!.on("data", onData);
  };
}

for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  test(`${signal} mid-stream: result status interrupted, exit ${code}`, async () => {
    server.enqueue({ text: "word ".repeat(500), delayMs: 20 });
    const sb = makeSandbox(server.url, TEXT_ONLY);
    const r = await sb.run(headless("talk for long"), { onSpawn: signalAfterFirstDelta(signal) });
    assert.equal(r.code, code, r.stderr);
    const lines = parseLines(r.stdout);
    const result = assertProtocolStream(lines, { deltas: true });
    // What streamed is kept: the block is closed and written as a text marked interrupted, and it is the result's text.
    assert.deepEqual(kindSequence(lines), ["session-start", "text", "text-delta", "content-end", "text", "result"]);
    assert.deepEqual(lines.at(-2), { ...lines.at(-2), kind: "text", content: joinDeltas(lines, "text-delta"), interrupted: true });
    assert.deepEqual([result.status, result.text], ["interrupted", joinDeltas(lines, "text-delta")]);
    assert.equal(result.is_error, true);
    assert.ok(joinDeltas(lines, "text-delta").length < "word ".repeat(500).length, "the reply was cut short");
    assert.doesNotMatch(r.stderr, /^\s+at /m);
    const { session } = await sb.show(result.session_id);
    assert.equal(session.status, "interrupted");
  });
}

test("SIGINT while a tool runs: the call is killed, the next one is not run, one result ends the stream", async () => {
  server.enqueue({
    toolCalls: [
      { id: "t_sleep", name: "bash", input: { command: "echo started; sleep 30" } },
      { id: "t_next", name: "bash", input: { command: "echo never" } },
    ],
  });
  const sb = makeSandbox(server.url);
  const r = await sb.run(headless("sleep"), {
    onSpawn: (child) => {
      // Once: a second SIGINT exits at once, without a result line.
      const onData = (d: string) => {
        if (!d.includes('"kind":"tool-update"')) return;
        child.stdout!.off("data", onData);
        child.kill("SIGINT");
      };
      child.stdout!.on("data", onData);
    },
  });
  assert.equal(r.code, 130, r.stderr);
  const lines = parseLines(r.stdout);
  const result = assertProtocolStream(lines, { deltas: true });
  assert.deepEqual(kindSequence(lines), ["session-start", "text", "tool-use", "tool-use", "tool-start", "tool-update", "tool-result", "tool-result", "result"]);
  const results = lines.filter((l) => l.kind === "tool-result");
  assert.deepEqual(results.map((l) => [l.tool_call_id, l.is_error]), [["t_sleep", true], ["t_next", true]]);
  assert.match(results[0]!.result, /^started/);
  assert.doesNotMatch(results[1]!.result, /never/);
  assert.equal(result.status, "interrupted");
});

test("failing tools become error tool-results and the loop goes on", async () => {
  server.enqueue(
    {
      toolCalls: [
        { id: "t_missing", name: "read_file", input: { path: "no-such-file.txt" } },
        { id: "t_unknown", name: "teleport", input: { to: "mars" } },
        { id: "t_badinput", name: "bash", input: { cmd: "ls" } },
        { id: "t_exit", name: "bash", input: { command: "echo partial; exit 3" } },
      ],
    },
    { text: "Recovered anyway." },
  );
  const sb = makeSandbox(server.url);
  const r = await sb.run(headless("try tools"));
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  const result = assertProtocolStream(lines, { deltas: true });
  const results = lines.filter((l) => l.kind === "tool-result");
  assert.deepEqual(results.map((l) => [l.tool_call_id, l.is_error]), [
    ["t_missing", true], ["t_unknown", true], ["t_badinput", true], ["t_exit", true],
  ]);
  assert.match(results[1]!.result, /Unknown tool "teleport"/);
  assert.match(results[3]!.result, /partial[\s\S]*exit code 3/);
  assert.equal(result.status, "success");
  assert.equal(result.text, "Recovered anyway.");
  const answers = server.requests[1]!.body.messages.at(-1).content;
  assert.deepEqual(answers.map((b: any) => [b.type, b.tool_use_id, b.is_error]), [
    ["tool_result", "t_missing", true], ["tool_result", "t_unknown", true],
    ["tool_result", "t_badinput", true], ["tool_result", "t_exit", true],
  ]);
});

// The case table (--stream-deltas without --headless, --format with it, an unknown session, an empty
// prompt, a bad --timeout, an invalid config) runs in process in test/cli/front-end-flags.test.ts; here
// one case of each kind proves the real process: exit 2, one line on stderr, nothing on stdout.
test("bad flags and failures before the run: exit 2, one line on stderr, nothing on stdout, no session", async () => {
  const sb = makeSandbox(server.url);
  const r = await sb.run(["run", "--headless", "--session", "0000dead", "hi"]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /no session matches/);
  assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  const bad = makeSandbox(server.url, { retry: { maxRetries: "many" } });
  const config = await bad.run(["run", "--headless", "hi"]);
  assert.equal(config.code, 2, config.stderr);
  assert.equal(config.stdout, "");
  assert.match(config.stderr, /config\.json/);
  assert.equal(config.stderr.trim().split("\n").length, 1, config.stderr);
  assert.deepEqual(await sb.sessions(), []);
  assert.deepEqual(await bad.sessions(), []);
  assert.deepEqual(server.requests, []);
});
