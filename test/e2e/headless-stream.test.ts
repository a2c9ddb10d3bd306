import { test } from "node:test";
import assert from "node:assert/strict";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";
import { assertProtocolStream, joinDeltas, kindSequence } from "./protocol-check.js";

const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();

function afterRun() {
  assert.deepEqual(server.unexpected, []);
  assert.deepEqual(server.rejected, []);
  assert.equal(server.pending(), 0);
}

/** A bash loop that prints 100 lines, ~25 KB with multibyte characters, over ~0.5 s or more. */
const LOOP = "for i in $(seq 1 100); do printf 'line %s é ü %0230d\\n' $i 0; sleep 0.005; done";
const loopOutput = Array.from({ length: 100 }, (_, i) => `line ${i + 1} é ü ${"0".repeat(230)}\n`).join("");

function toolScript() {
  server.enqueue(
    { thinking: "Let me run the loop.", text: "Running it.", toolCalls: [{ id: "toolu_loop", name: "bash", input: { command: LOOP } }] },
    { text: "The loop printed 100 lines.", chunkSize: 4 },
  );
}

test("without --stream-deltas: only complete kinds, in order", async () => {
  toolScript();
  const sb = makeSandbox(server.url);
  // --sandbox off: the whole session-start is compared, and `sandboxed` depends on the machine otherwise.
  const r = await sb.run(["run", "--headless", "--model", MODEL, "--sandbox", "off", "run the loop"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  const result = assertProtocolStream(lines, { deltas: false });
  assert.deepEqual(kindSequence(lines), [
    "session-start", "text", "thinking", "text", "tool-use", "tool-result", "text", "result",
  ]);
  assert.deepEqual(lines[0], {
    kind: "session-start", conversation_id: result.session_id, ts: lines[0]!.ts, model: MODEL, cwd: sb.workspace,
    tools: ["bash", "read_file", "write_file", "edit_file", "grep", "glob", "list", "todo_write", "skill", "task", "web_fetch", "job_output", "job_kill"], protocol_version: 1, resumed: false, permission_mode: "auto", headless: true, sandboxed: false, seq: 0,
  });
  const contents = lines.filter((l) => l.kind === "text" || l.kind === "thinking").map((l) => [l.kind, l.role, l.content]);
  assert.deepEqual(contents, [
    ["text", "user", "run the loop"],
    ["thinking", "assistant", "Let me run the loop."],
    ["text", "assistant", "Running it."],
    ["text", "assistant", "The loop printed 100 lines."],
  ]);
  const use = lines.find((l) => l.kind === "tool-use")!;
  assert.deepEqual(JSON.parse(use.input), { command: LOOP });
  const toolResult = lines.find((l) => l.kind === "tool-result")!;
  assert.equal(toolResult.tool_call_id, "toolu_loop");
  assert.equal(toolResult.is_error, false);
  assert.equal(toolResult.result, loopOutput);
  assert.equal(result.status, "success");
  assert.equal(result.text, "The loop printed 100 lines.");
  assert.equal(result.num_turns, 2);
  afterRun();
});

// An OpenAI model's deltas (thinking in <think> tags) become the same lines: test/cli/headless-stream.test.ts,
// in process, with a tool that runs there (read_file). The bounded tool updates do not depend on the provider.
test("anthropic with --stream-deltas: every delta kind, complete entries equal their deltas, bounded tool updates", async () => {
  toolScript();
  const sb = makeSandbox(server.url);
  const r = await sb.run(["run", "--headless", "--stream-deltas", "--model", MODEL, "run the loop"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  assertProtocolStream(lines, { deltas: true });
  assert.deepEqual(kindSequence(lines), [
    "session-start", "text",
    "thinking-start", "thinking-delta", "thinking-end", "text-delta", "content-end", "thinking", "text", "tool-use",
    "tool-start", "tool-update", "tool-result",
    "text-delta", "content-end", "text", "result",
  ]);
  assert.equal(joinDeltas(lines, "thinking-delta"), "Let me run the loop.");
  assert.ok(lines.filter((l) => l.kind === "text-delta").length > 5, "the final answer arrives in several deltas");

  const updates = lines.filter((l) => l.kind === "tool-update");
  // Rate-limited to one per 100 ms of the call (tool-result's duration_ms), whatever the machine's load makes
  // of the loop's half second; one update per printed line would be 100.
  const ran = lines.find((l) => l.kind === "tool-result")!.duration_ms as number;
  assert.ok(updates.length >= 1 && updates.length <= Math.ceil(ran / 100) + 1, `${updates.length} tool-update lines in ${ran} ms`);
  let previous = 0;
  for (const u of updates) {
    assert.equal(u.tool_call_id, "toolu_loop");
    assert.ok(Buffer.byteLength(u.tail) <= 4096, `tail of ${Buffer.byteLength(u.tail)} bytes`);
    assert.ok(u.total_bytes >= previous && u.total_bytes <= Buffer.byteLength(loopOutput));
    previous = u.total_bytes;
    const soFar = Buffer.from(loopOutput).subarray(0, u.total_bytes).toString();
    assert.ok(u.tail.length > 0 && soFar.endsWith(u.tail), "the tail is the end of the output so far");
  }
  afterRun();
});

// One Keen for both: 5,000 deltas through a reader that also stops reading (they were two runs of 5,000).
test("5,000 deltas arrive complete and in order; a consumer that stops reading for a while loses nothing", async () => {
  const deltas = Array.from({ length: 5000 }, (_, i) => `slow${i} `);
  server.enqueue({ deltas });
  const sb = makeSandbox(server.url);
  // --sandbox off here and below: these turns only talk; a turn with bash available warms the sandbox.
  let pauses = 0;
  const r = await sb.run(["run", "--headless", "--stream-deltas", "--model", MODEL, "--sandbox", "off", "count"], {
    timeoutMs: 60_000,
    onSpawn: (child) => {
      // Stop reading for 700 ms three times, at the start and after each further 200 KB of the ~850 KB of
      // lines: counted in bytes, not time, since how fast the lines come differs by machine and Node version.
      let read = 0;
      let next = 0;
      child.stdout!.on("data", (chunk: Buffer) => {
        read += chunk.length;
        if (pauses === 3 || read < next) return;
        pauses++;
        next = read + 200_000;
        child.stdout!.pause();
        setTimeout(() => child.stdout!.resume(), 700);
      });
    },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(pauses, 3, "the reader stopped three times");
  const lines = parseLines(r.stdout);
  const result = assertProtocolStream(lines, { deltas: true });
  assert.deepEqual(lines.filter((l) => l.kind === "text-delta").map((l) => l.delta), deltas);
  assert.equal(joinDeltas(lines, "text-delta"), deltas.join(""));
  assert.equal(result.text, deltas.join(""));
  afterRun();
});

test("a reader that leaves after the first line (| head -1): quiet exit 141, session stored", async () => {
  server.enqueue({ text: "word ".repeat(200), delayMs: 10 });
  const sb = makeSandbox(server.url);
  let first = "";
  const r = await sb.run(["run", "--headless", "--stream-deltas", "--model", MODEL, "--sandbox", "off", "talk"], {
    onSpawn: (child) => {
      let seen = "";
      const onData = (d: string) => {
        seen += d;
        if (!seen.includes("\n")) return;
        first = seen.slice(0, seen.indexOf("\n"));
        child.stdout!.off("data", onData);
        child.stdout!.destroy();
      };
      child.stdout!.on("data", onData);
    },
  });
  assert.equal(JSON.parse(first).kind, "session-start");
  assert.equal(r.code, 141, r.stderr);
  assert.doesNotMatch(r.stderr, /EPIPE|internal error|^\s+at /m, "no stack trace");
  const id = JSON.parse(first).conversation_id;
  const { session, events } = await sb.show(id);
  assert.equal(session.status, "interrupted");
  assert.deepEqual(events.filter((e) => e.kind === "text").map((e) => e.content), ["talk"]);
  assert.ok(events.some((e) => e.kind === "turn-end" && e.status === "interrupted"));
});
