import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { type MockStep } from "../fakes/mock-llm-server.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { parseLines } from "./harness.js";
import { assertProtocolStream, kindSequence } from "./protocol-check.js";
import { comparable, removeSandboxes, replaySandbox, sandbox } from "./replay-helpers.js";

// Recording and replaying in the real process: multi-step tool runs, keen stdio, a mismatch's exit
// code and stderr, a cassette of another version. Text-turn cases (--replay-loose, a replayed tool
// mismatch, a bare replay, a failing run, --replay-speed 1, KEEN_RECORD) run in process:
// test/cli/replay.test.ts.

const server = useMockLLMServer();
after(() => removeSandboxes());

function used() {
  assert.deepEqual(server.unexpected, []);
  assert.deepEqual(server.rejected, []);
  assert.equal(server.pending(), 0);
}

const FILES = { "a.txt": "alpha\n" };
const PROMPT = "what is in a.txt?";
const cases: { name: string; model: string; env: Record<string, string>; retry: MockStep }[] = [
  { name: "anthropic (529 then success)", model: "anthropic/claude-test", env: {}, retry: { kind: "http-error", status: 529, headers: { "retry-after": "0" } } },
  { name: "openai (a connection reset mid-stream)", model: "openai/gpt-4.1", env: { OPENAI_API_KEY: "test-key" }, retry: { text: "partial answer that", cutAfterChunks: 3 } },
];

const steps = (retry: MockStep): MockStep[] => [
  retry,
  {
    thinking: "Read it, then count its bytes.", text: "Looking.",
    toolCalls: [{ id: "call_read", name: "read_file", input: { path: "a.txt" } }, { id: "call_wc", name: "bash", input: { command: "wc -c < a.txt" } }],
  },
  { text: "It says alpha (6 bytes).\n\n<keen_memory>\n- a.txt: \"alpha\", 6 bytes\n</keen_memory>", chunkSize: 6 },
];

for (const c of cases) {
  test(`${c.name}: a recorded multi-step run replays with the mock gone and no key: the same JSONL stream, and the session resumes`, async () => {
    const live = sandbox(server.url);
    for (const [name, content] of Object.entries(FILES)) writeFileSync(join(live.workspace, name), content);
    const first = join(live.root, "first.jsonl");
    const second = join(live.root, "second.jsonl");
    server.enqueue(...steps(c.retry));
    const r1 = await live.run(["run", "--headless", "--stream-deltas", "--model", c.model, "--record", first, PROMPT], { env: c.env });
    assert.equal(r1.code, 0, r1.stderr);
    const liveLines = parseLines(r1.stdout);
    assert.ok(kindSequence(liveLines).includes("retry"), "the recording holds a retry");
    const id = liveLines[0]!.conversation_id;
    server.enqueue({ text: "Still alpha." });
    // --sandbox off in this turn and its replay: they only talk (no tool runs), and with bash available each would warm the sandbox.
    const r2 = await live.run(["run", "--headless", "--sandbox", "off", "--session", id, "--record", second, "and now?"], { env: c.env });
    assert.equal(r2.code, 0, r2.stderr);
    used();

    const rs = await replaySandbox(FILES);
    const p1 = await rs.run(["run", "--headless", "--stream-deltas", "--replay", first, "--replay-speed", "0", "--permission-mode", "auto", PROMPT]);
    assert.equal(p1.code, 0, p1.stderr);
    const replayLines = parseLines(p1.stdout);
    // The retry is in the first step: the next step's deltas keep the turn's attempt number.
    assertProtocolStream(replayLines, { deltas: true });
    assert.deepEqual(comparable(replayLines, rs.workspace), comparable(liveLines, live.workspace));

    // The replayed session is stored like a live one: a second cassette continues it.
    const newId = replayLines[0]!.conversation_id;
    const p2 = await rs.run(["run", "--headless", "--sandbox", "off", "--session", newId, "--replay", second, "--replay-speed", "0", "--permission-mode", "auto", "and now?"]);
    assert.equal(p2.code, 0, p2.stderr);
    assert.deepEqual(comparable(parseLines(p2.stdout), rs.workspace), comparable(parseLines(r2.stdout), live.workspace));
  });
}

// The stdio cassette also serves the mismatch: a `keen run` replaying it with another prompt (a
// cassette of its own cost one more Keen start).
test("keen stdio: --record and --replay over two prompts give the same stream; a mismatching run --replay of it fails with the documented error (exit 1), on stdout and stderr, and defaults to read-only", async () => {
  const prompts = ["first question", "second question"];
  const commands = `${prompts.map((text, i) => JSON.stringify({ kind: "prompt", id: `p${i}`, text })).join("\n")}\n`;
  const live = sandbox(server.url);
  const cassette = join(live.root, "stdio.jsonl");
  server.enqueue({ thinking: "Easy.", text: "One." }, { text: "Two." });
  // --sandbox off: these turns only talk, no tool runs, and a turn with bash available warms the sandbox.
  const r = await live.run(["stdio", "--model", "anthropic/claude-test", "--sandbox", "off", "--record", cassette], { stdin: commands });
  assert.equal(r.code, 0, r.stderr);
  used();
  const rs = await replaySandbox();
  const p = await rs.run(["stdio", "--replay", cassette, "--replay-speed", "0", "--sandbox", "off"], { stdin: commands });
  assert.equal(p.code, 0, p.stderr);
  const replayLines = parseLines(p.stdout);
  assert.equal(replayLines[0]!.permission_mode, "ask", "keen stdio keeps its ask default when replaying");
  assert.deepEqual(comparable(replayLines, rs.workspace), comparable(parseLines(r.stdout), live.workspace));

  const wrong = await rs.run(["run", "--headless", "--replay", cassette, "--replay-speed", "0", "--sandbox", "off", "say goodbye"]);
  assert.equal(wrong.code, 1);
  const lines = parseLines(wrong.stdout);
  const message = `replay: request 1 does not match ${cassette}: user message 1: the cassette has "first question", this run sent "say goodbye" (--replay-loose serves it anyway)`;
  assert.deepEqual(lines.filter((l) => l.kind === "error").map((l) => l.message), [message]);
  assert.equal(lines.some((l) => l.kind === "retry"), false, "a mismatch is not retried");
  assert.equal(lines.at(-1)!.status, "error");
  assert.equal(lines[0]!.permission_mode, "read-only", "a one-shot replay defaults to read-only");
  assert.match(wrong.stderr, /keen: error: replay: request 1 does not match/);
});

test("a cassette of another version is a usage error (exit 2)", async () => {
  const sb = sandbox(server.url);
  // The run flags' errors are checked in-process (test/headless/cassette-flags.test.ts); here the real
  // process refuses a cassette it cannot read: exit 2, the message on stderr.
  const bad = join(sb.root, "bad.jsonl");
  writeFileSync(bad, '{"type":"cassette","version":9}\n');
  const r = await sb.run(["stdio", "--replay", bad]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /is cassette version 9; this Keen reads version 1/);
});
