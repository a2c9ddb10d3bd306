import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { assertBudget } from "../cli/max-turns-checks.js";
import { makeSandbox, parseLines } from "./harness.js";

// The real process under --max-turns: bash steps in a sandboxed workspace, exit 3 for a tool call on
// the final step, exit 2 for a bad value. The budget of every n for both vendors, the max_turns
// result, resume and config maxTurns are checked in process (test/cli/max-turns.test.ts): same
// main(), a Keen start (~0.6 s of CPU with bash) less per case.

const server = useMockLLMServer();

test("--max-turns 3 with a model that keeps calling bash ends with the committed answer", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue(...[1, 2].map((i) => ({ toolCalls: [{ name: "bash", input: { command: `echo step${i}` } }] })), { text: "The answer is 42." });
  const run = await sb.run(["run", "--max-turns", "3", "what is the answer?"]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, "The answer is 42.\n");
  assert.deepEqual(server.rejected, []);
  assertBudget("anthropic", server.requests.map((r) => r.body), 3);
  assert.match(JSON.stringify(server.requests[2]!.body.messages), /step2/, "the bash steps ran");
});

test("a tool call on the final step anyway is reported, never executed: exit 3", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: "touch executed.txt" } }] });
  const run = await sb.run(["run", "--headless", "--max-turns", "1", "do it"]);
  assert.equal(run.code, 3, run.stderr);
  const lines = parseLines(run.stdout);
  const toolResult = lines.find((l) => l.kind === "tool-result");
  assert.equal(toolResult?.is_error, true);
  assert.match(toolResult?.result, /Not executed/);
  const result = lines.at(-1)!;
  assert.deepEqual([result.kind, result.status, result.is_error], ["result", "max_turns", true]);
  assert.equal(existsSync(join(sb.workspace, "executed.txt")), false);
});

test("--max-turns must be a positive integer: exit 2, nothing on stdout", async () => {
  const sb = makeSandbox(server.url);
  const run = await sb.run(["run", "--max-turns", "x", "hi"]);
  assert.equal(run.code, 2, run.stderr);
  assert.equal(run.stdout, "");
  assert.match(run.stderr, /^keen: --max-turns must be a positive integer, not "x"\n$/);
});
