import { test } from "node:test";
import assert from "node:assert/strict";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";

const server = useMockLLMServer();
const MODEL = "anthropic/claude-test";

const plan = [
  { content: "Read the code", status: "completed" },
  { content: "Write the fix", status: "in_progress" },
  { content: "Run the tests", status: "pending" },
];

test("todo_write through bin/keen: read-only runs it unasked, the stream has plan-update, the store keeps it, a replay shows it", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue(
    { toolCalls: [{ id: "toolu_plan", name: "todo_write", input: { todos: plan } }] },
    { text: "Planned." },
  );
  const r = await sb.run(["run", "--headless", "--model", MODEL, "--permission-mode", "read-only", "plan it"]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(server.unexpected, []);
  assert.equal(server.pending(), 0);
  const lines = parseLines(r.stdout);
  assert.deepEqual(lines.map((l) => l.kind), ["session-start", "text", "tool-use", "tool-result", "plan-update", "text", "result"]);
  assert.equal(lines[3]!.is_error, false);
  const update = lines[4]!;
  assert.deepEqual([update.tool_call_id, update.entries], ["toolu_plan", plan]);
  // The model was told the plan took.
  const toolResult = server.requests[1]!.body.messages.at(-1).content[0];
  assert.equal(toolResult.content, "Plan updated: 1 of 3 done.");

  const id = lines.at(-1)!.session_id as string;
  const shown = await sb.show(id);
  const stored = shown.events.filter((e) => e.kind === "plan-update");
  assert.deepEqual(stored.map((e) => e.entries), [plan]);
  // The command through main() in this process (a Keen start less): what it prints is Keen's own; run-store,
  // headless-replay and terminal-output run it as a real process.
  const replay = await sb.main(["sessions", "show", id, "--jsonl"]);
  assert.equal(replay.code, 0, replay.stderr);
  assert.deepEqual(parseLines(replay.stdout).filter((l) => l.kind === "plan-update").map((l) => l.entries), [plan]);

  // Resumed, the model is reminded of its plan (its tool calls are not replayed).
  server.enqueue({ text: "Continuing." });
  const next = await sb.run(["run", "--no-stdin", "--model", MODEL, "--session", id, "go on"]);
  assert.equal(next.code, 0, next.stderr);
  const history = JSON.stringify(server.requests.at(-1)!.body.messages);
  assert.ok(history.includes("[x] Read the code\\n[~] Write the fix\\n[ ] Run the tests"), history);
});
