import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { failed, resultOf } from "../cli/run-failures-checks.js";
import { makeSandbox, parseLines, waitForStdout } from "./harness.js";

const server = useMockLLMServer();

// The model answers with text only in every test but the bash one: no tool runs, so the sandbox
// plays no role and is off (with bash available, every turn would warm it up: ~0.25 s of CPU per Keen).
const TEXT_ONLY = { sandbox: { mode: "off" } };
const RETRY = { ...TEXT_ONLY, retry: { maxRetries: 1, baseDelayMs: 10 } };

// The retries, the other provider failures and the text format's hint run in process in
// test/cli/run-failures.test.ts; this spawned case proves the real process's exit code and split.
test("provider 400 → exit 1, the message on stderr, an error result, the session's status error", async () => {
  const sb = makeSandbox(server.url, RETRY);
  server.enqueue({ kind: "http-error", status: 400, body: { type: "error", error: { type: "invalid_request_error", message: "prompt is too long" } } });
  const r = await sb.run(["run", "--format", "json", "--no-stdin", "hi"]);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, "keen: error: 400 invalid_request_error: prompt is too long\n");
  assert.deepEqual(resultOf(r.stdout), failed(["400 invalid_request_error: prompt is too long"]));
  assert.equal(server.requests.length, 1, "a 400 is not retried");
  assert.deepEqual((await sb.sessions()).map((s) => s.status), ["error"]);
});

test("--timeout bounds the whole run → exit 1 with 'timed out', the step and the usage the provider reported, the session's status error", async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  server.enqueue({ text: "slow", stallAfterChunks: 3 });
  // 4 s, not less: on a loaded machine start-up alone has taken over a second, and the
  // assertions below need the request to have reached the stall before the clock runs out.
  const r = await sb.run(["run", "--format", "json", "--no-stdin", "--timeout", "4", "hi"]);
  assert.equal(r.code, 1);
  assert.equal(r.stderr, "keen: error: timed out after 4.0s\n");
  // message_start and the first delta reported 10 input and 1 output token before the stall.
  const usage = { input_tokens: 10, cached_tokens: 0, cache_write_tokens: 0, output_tokens: 1, reasoning_tokens: 0, total_tokens: 11 };
  assert.deepEqual(resultOf(r.stdout), failed(["timed out after 4.0s"], usage, 1, 0.000045));
  assert.deepEqual((await sb.sessions()).map((s) => s.status), ["error"]);
});

const LONG = Array.from({ length: 300 }, (_, i) => `word${i} `).join("");

for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  test(`${signal} mid-stream → exit ${code}, partial text stored, the session interrupted`, async () => {
    const sb = makeSandbox(server.url, TEXT_ONLY);
    server.enqueue({ text: LONG, delayMs: 20 });
    let deltas = 0;
    const r = await sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", "tell me"], {
      onSpawn: (child) => {
        child.stdout!.on("data", (d: string) => {
          deltas += (d.match(/"text-delta"/g) ?? []).length;
          if (deltas >= 3 && !child.killed) child.kill(signal);
        });
      },
    });
    assert.equal(r.code, code, r.stderr);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    const lines = parseLines(r.stdout);
    const result = lines.at(-1)!;
    assert.deepEqual([result.kind, result.status, result.is_error], ["result", "interrupted", true]);
    const [meta] = await sb.sessions();
    assert.equal(meta!.status, "interrupted");
    const { events } = await sb.show(meta!.id);
    const stored = events.filter((e) => e.kind === "assistant-message").map((e) => e.message.content[0].text);
    assert.equal(stored.length, 1);
    assert.ok(stored[0].startsWith("word0 word1 word2 "), stored[0]);
    assert.ok(stored[0].length < LONG.length);
    assert.deepEqual(events.filter((e) => e.kind === "turn-end").map((e) => e.status), ["interrupted"]);
  });
}

test("SIGINT during a bash tool call kills the command's process group and stores the aborted result", async () => {
  const sb = makeSandbox(server.url);
  const marker = "31.4159";
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: `echo started; sleep ${marker}; echo finished` } }] });
  // Signalled once the command runs (its first output line arrives as a tool-update).
  const r = await sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", "wait"], {
    onSpawn: (child) => void waitForStdout(child, (out) => /"tool-update".*started/.test(out)).then(() => child.kill("SIGINT"), () => {}),
  });
  assert.equal(r.code, 130, r.stderr);
  const sleeping = readdirSync("/proc").filter((pid) => {
    try {
      return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
    } catch {
      return false;
    }
  });
  assert.deepEqual(sleeping, []);
  const [meta] = await sb.sessions();
  const { events } = await sb.show(meta!.id);
  const result = events.find((e) => e.kind === "tool-result")!;
  assert.deepEqual([result.is_error, result.result], [true, "started\n\n\n[aborted; the command and its child processes were killed]"]);
  assert.equal(result.interrupted, true, "stopped by the interrupt, not failed on its own");
  assert.deepEqual([meta!.status, events.at(-1)!.kind, events.at(-1)!.status], ["interrupted", "result", "interrupted"]);
});

test("`| head -1`: the reader leaves after the first line → quiet exit, session stored", async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  server.enqueue({ text: LONG, delayMs: 5 });
  const r = await sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", "stream a lot"], {
    onSpawn: (child) => {
      let seen = "";
      const onData = (d: string) => {
        seen += d;
        if (seen.includes("\n")) {
          child.stdout!.off("data", onData);
          child.stdout!.destroy();
        }
      };
      child.stdout!.on("data", onData);
    },
  });
  assert.deepEqual({ code: r.code, stderr: r.stderr }, { code: 141, stderr: "" });
  const [meta] = await sb.sessions();
  assert.equal(meta!.status, "interrupted");
  const { events } = await sb.show(meta!.id);
  assert.deepEqual(events.slice(0, 3).map((e) => e.kind), ["session-start", "user-message", "text"]);
  assert.equal(events.at(-1)!.kind, "result");
});
