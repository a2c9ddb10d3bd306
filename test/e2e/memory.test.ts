import { test } from "node:test";
import assert from "node:assert/strict";
import { type MockReplyStep } from "../fakes/mock-llm-server.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { BLOCK_PARTS, INNER, RAW, SPLIT_DELTAS, VISIBLE, assertHidden, textOf } from "../cli/memory-checks.js";
import { makeSandbox, parseLines } from "./harness.js";
import { assertProtocolStream, joinDeltas } from "./protocol-check.js";

// The tool-memory block in the real process, after a bash turn in a sandboxed workspace: one vendor
// each way, the headless stream checked against the published schema. Every output format, both
// vendors, turn 2 and the odd tags are checked in process (test/cli/memory.test.ts), a Keen start
// (~0.6 s of CPU with bash) less per run.

const server = useMockLLMServer();

/** Turn 1: a bash call, then an answer ending with the memory block. */
function enqueueToolTurn(answer: Partial<MockReplyStep>) {
  server.enqueue({ text: "Let me check.", toolCalls: [{ name: "bash", input: { command: "echo found" } }] }, answer);
}

test("anthropic, headless: no line but the memory line shows the block; storage keeps it raw", async () => {
  const sb = makeSandbox(server.url);
  enqueueToolTurn({ deltas: SPLIT_DELTAS });
  const headless = await sb.run(["run", "--model", "anthropic/claude-test", "--headless", "--stream-deltas", "check it"]);
  assert.equal(headless.code, 0, headless.stderr);
  const lines = parseLines(headless.stdout);
  const end = assertProtocolStream(lines, { deltas: true });
  const memory = lines.filter((l) => l.kind === "memory");
  assert.deepEqual(memory.map((l) => l.content), [INNER]);
  for (const l of lines.filter((l) => l.kind !== "memory")) assertHidden(JSON.stringify(l), `a ${l.kind} line`);
  assert.equal(joinDeltas(lines, "text-delta"), `Let me check.${VISIBLE}`);
  assert.equal(end.text, VISIBLE.trimEnd());
  assert.ok(memory[0]!.seq > lines.filter((l) => l.kind === "text").at(-1)!.seq, "memory follows the step's text");
  assert.match(JSON.stringify(server.requests[1]!.body), /found/, "bash ran");

  const { events } = await sb.show(end.session_id);
  assert.deepEqual(events.filter((e) => e.kind === "assistant-message").map((e) => textOf(e.message)), ["Let me check.", RAW]);
  assert.deepEqual(server.unexpected, []);
  assert.deepEqual(server.rejected, []);
});

test("openai, text then json: the answer without the block; turn 2 with --session sends the raw block back", async () => {
  const sb = makeSandbox(server.url);
  const env = { OPENAI_API_KEY: "test-key" };
  enqueueToolTurn({ text: RAW, chunkSize: 3 });
  const first = await sb.run(["run", "--model", "openai/gpt-4.1", "check it"], { env });
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stdout, VISIBLE);
  const system = textOf(server.requests[0]!.body.messages.find((m: any) => m.role === "system"));
  for (const part of BLOCK_PARTS) assert.match(system, part);
  const [session] = await sb.sessions();
  server.enqueue({ text: "You ran echo." });
  // --sandbox off: turn 2 only talks (a turn with bash available warms the sandbox up); turn 1 ran bash in it.
  const second = await sb.run(["run", "--session", session!.id, "--format", "json", "--sandbox", "off", "what did you learn?"], { env });
  assert.equal(second.code, 0, second.stderr);
  assert.equal(JSON.parse(second.stdout).text, "You ran echo.");

  assert.equal(server.requests.at(-1)!.vendor, "openai");
  const messages = server.requests.at(-1)!.body.messages.filter((m: any) => m.role !== "system");
  assert.deepEqual(messages.map((m: any) => m.role), ["user", "assistant", "user"]);
  assert.ok(textOf(messages[1]).endsWith(RAW), `assistant history: ${JSON.stringify(textOf(messages[1]))}`);
  assert.match(textOf(messages[2]), /what did you learn\?/);
  assert.equal(server.pending(), 0);
});
