import { test } from "node:test";
import assert from "node:assert/strict";
import { type MockReplyStep } from "../fakes/mock-llm-server.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { protocolJsonSchema } from "../../protocol/jsonl.js";
import { assertProtocolStream, joinDeltas, kindSequence, useSchemaFrom } from "../e2e/protocol-check.js";
import { makeInProcessSandbox } from "./in-process.js";

// `keen run --headless` streams of retried attempts and of a --timeout, in this process
// (test/cli/in-process.ts): which attempt a delta belongs to and what the result says are Keen's
// decisions, and a case costs milliseconds instead of a Keen start. test/e2e/headless-failures.test.ts
// keeps the process's side: a provider failure's exit code and stdout/stderr split, the signals,
// the tools that fail, the usage errors.

const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();
// The lines are checked against the schema `keen protocol schema` prints, made by the same function here.
useSchemaFrom(protocolJsonSchema);

// Text-only turns: no tool runs, so the sandbox plays no role (and must not warm up in this process).
const headless = (...args: string[]) => ["run", "--headless", "--no-stdin", "--sandbox", "off", "--model", MODEL, ...args];
const parseLines = (stdout: string) => stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, any>);

// Anthropic chunks: message_start, ping, content_block_start, then one text delta per word.
const failures: [string, Partial<MockReplyStep>][] = [
  ["an in-stream overloaded error", { errorAfterChunks: 5 }],
  // A reset may drop what the client had not read yet: pace the chunks so the first deltas are read.
  ["a connection reset", { cutAfterChunks: 5, delayMs: 30 }],
];
for (const [name, failure] of failures) {
  test(`a retried attempt after ${name}: old deltas marked attempt 1, complete text from attempt 2 only`, async () => {
    server.enqueue({ text: "doomed first try ", ...failure }, { text: "The good answer.", chunkSize: 5 });
    const sb = makeInProcessSandbox(server);
    const r = await sb.keen(headless("--stream-deltas", "answer"));
    assert.equal(r.code, 0, r.stderr);
    const lines = parseLines(r.stdout);
    const result = assertProtocolStream(lines, { deltas: true });
    assert.deepEqual(kindSequence(lines), ["session-start", "text", "text-delta", "retry", "text-delta", "content-end", "text", "result"]);
    const doomed = joinDeltas(lines, "text-delta", 1);
    assert.ok(doomed.length > 0 && "doomed first ".startsWith(doomed), doomed);
    assert.equal(joinDeltas(lines, "text-delta", 2), "The good answer.");
    const retry = lines.find((l) => l.kind === "retry")!;
    assert.equal(retry.attempt, 2);
    assert.ok(retry.delay_ms >= 0 && retry.reason.length > 0);
    assert.deepEqual(lines.filter((l) => l.kind === "text" && l.role === "assistant").map((l) => l.content), ["The good answer."]);
    assert.equal(result.text, "The good answer.");
    assert.equal(result.num_turns, 1);
    assert.equal(server.requests.length, 2);
    assert.equal(server.pending(), 0);
  });
}

test("--timeout: error line, result with is_error, exit 1", async () => {
  server.enqueue({ text: "slow ".repeat(200), delayMs: 50 });
  const sb = makeInProcessSandbox(server);
  const r = await sb.keen(headless("--timeout", "0.5", "slow"));
  assert.equal(r.code, 1, r.stderr);
  const lines = parseLines(r.stdout);
  const result = assertProtocolStream(lines, { deltas: false });
  // Whatever streamed before the timeout (on a loaded machine, maybe nothing) is kept as a text marked interrupted.
  const kept = lines.filter((l) => l.kind === "text" && l.interrupted);
  assert.ok(kept.every((l) => "slow ".repeat(200).startsWith(l.content)) && kept.length <= 1);
  assert.equal(result.text, kept[0]?.content ?? "");
  const rest = lines.filter((l) => !kept.includes(l));
  assert.deepEqual(kindSequence(rest), ["session-start", "text", "error", "result"]);
  assert.match(rest[2]!.message, /timed out/);
  assert.equal(result.status, "error");
  assert.equal(result.is_error, true);
});
