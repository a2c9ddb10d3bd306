import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { protocolJsonSchema } from "../../protocol/jsonl.js";
import { assertProtocolStream, joinDeltas, kindSequence, useSchemaFrom } from "../e2e/protocol-check.js";
import { makeInProcessSandbox } from "./in-process.js";

// An OpenAI model's `keen run --headless --stream-deltas` stream, in this process (test/cli/in-process.ts):
// how its deltas (thinking in <think> tags, text, a tool call) become protocol lines is Keen's doing,
// and the tool is read_file, which runs in this process (a unit test spawns nothing).
// test/e2e/headless-stream.test.ts keeps the spawned runs: bash's bounded tool updates, 5,000 deltas
// through a pipe that stops being read, a reader that leaves.

const server = useMockLLMServer();
useSchemaFrom(protocolJsonSchema);
const parseLines = (stdout: string) => stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, any>);

test("openai (thinking in <think> tags) with --stream-deltas: every delta kind, complete entries equal their deltas", async () => {
  const sb = makeInProcessSandbox(server);
  writeFileSync(join(sb.workspace, "notes.txt"), "the notes\n");
  server.enqueue(
    { thinking: "Let me read the notes.", text: "Reading them.", toolCalls: [{ id: "call_read", name: "read_file", input: { path: "notes.txt" } }] },
    { text: "The notes say hello.", chunkSize: 4 },
  );
  // --sandbox off: read_file runs in this process, and no command does.
  const r = await sb.keen(["run", "--headless", "--stream-deltas", "--no-stdin", "--sandbox", "off", "--model", "openai/gpt-4.1", "read the notes"], {
    env: { OPENAI_API_KEY: "test-key" },
  });
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  const result = assertProtocolStream(lines, { deltas: true });
  assert.deepEqual(kindSequence(lines), [
    "session-start", "text",
    "thinking-start", "thinking-delta", "thinking-end", "text-delta", "content-end", "thinking", "text", "tool-use",
    "tool-start", "tool-result",
    "text-delta", "content-end", "text", "result",
  ]);
  assert.equal(joinDeltas(lines, "thinking-delta"), "Let me read the notes.");
  assert.ok(lines.filter((l) => l.kind === "text-delta").length > 3, "the final answer arrives in several deltas");
  const read = lines.find((l) => l.kind === "tool-result")!;
  assert.deepEqual([read.tool_call_id, read.is_error], ["call_read", false]);
  assert.match(read.result, /the notes/);
  assert.deepEqual([result.status, result.text, result.num_turns], ["success", "The notes say hello.", 2]);
  assert.deepEqual([server.unexpected, server.rejected, server.pending()], [[], [], 0]);
});
