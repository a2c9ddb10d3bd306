import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../storage/level-store.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";
import { assertBudget, lastUserText, toolChoiceOf, type Vendor } from "./max-turns-checks.js";

// --max-turns and config maxTurns through the same main() the bundle runs, in this process
// (test/cli/in-process.ts), for both vendors: the step budget's prompts and tool_choice on every
// step, the max_turns result, resume, and a tool call on the final step. The model's tool steps
// call read_file, which runs in this process (a unit test spawns nothing). test/e2e/max-turns.test.ts
// keeps the real process: bash steps, exit 3 for a final-step tool call, and a usage error.

const server = useMockLLMServer();

const VENDORS: Vendor[] = ["anthropic", "openai"];
const toolStep = (i: number) => ({ toolCalls: [{ name: "read_file", input: { path: `step${i}.txt` } }] });

function sandbox(vendor: Vendor, config: Record<string, unknown> = {}) {
  const sb = makeInProcessSandbox(server, config);
  for (let i = 1; i <= 3; i++) writeFileSync(join(sb.workspace, `step${i}.txt`), `step${i}\n`);
  const env = vendor === "openai" ? { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.openaiBaseURL } : {};
  const model = vendor === "openai" ? ["--model", "openai/gpt-4.1"] : [];
  /** `keen run --no-stdin --sandbox off` with this vendor: read_file runs in process, no sandbox plays a role. */
  const run = (args: string[]) => sb.keen(["run", "--no-stdin", "--sandbox", "off", ...model, ...args], { env });
  return { ...sb, run };
}

for (const vendor of VENDORS) {
  for (const n of [1, 2, 3]) {
    test(`${vendor}: --max-turns ${n} with a model that keeps calling tools ends with the committed answer`, async () => {
      const sb = sandbox(vendor);
      for (let i = 1; i < n; i++) server.enqueue(toolStep(i));
      server.enqueue({ text: "The answer is 42." });
      const r = await sb.run(["--max-turns", String(n), "what is the answer?"]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, "The answer is 42.\n");
      assert.deepEqual(server.rejected, []);
      assertBudget(vendor, server.requests.map((q) => q.body), n);
    });
  }

  test(`${vendor}: status max_turns in the JSON result, and no injected prompt is stored or replayed`, async () => {
    const sb = sandbox(vendor);
    server.enqueue(toolStep(1), { text: "Best guess: 7." });
    const r = await sb.run(["--format", "json", "--max-turns", "2", "guess"]);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout);
    assert.deepEqual([result.status, result.is_error, result.text, result.num_turns], ["max_turns", false, "Best guess: 7.", 2]);

    server.enqueue(toolStep(2), toolStep(3), { text: "Again: 7." });
    const resumed = await sb.run(["--session", result.session_id, "--max-turns", "3", "once more"]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(resumed.stdout, "Again: 7.\n");
    const bodies = server.requests.map((q) => q.body);
    const firstOfTurn2 = JSON.stringify(bodies[2].messages);
    assert.doesNotMatch(firstOfTurn2, /FINAL STEP|Step budget/, "injected prompts are never replayed");
    assert.match(firstOfTurn2, /Best guess: 7\./);
    assert.match(lastUserText(bodies[3]), /Step budget: 2 steps remain/, "the flag is honoured after resume");
    assert.equal(toolChoiceOf(vendor, bodies[4]), "none");
    const events = await openStore(sb.home).load(result.session_id);
    assert.doesNotMatch(JSON.stringify(events.filter((e: any) => e.kind !== "prompt-injection")), /FINAL STEP|Step budget/);
    const users = events.filter((e: any) => e.kind === "user-message");
    assert.deepEqual(users.map((e: any) => e.message.headless), [true, true]);
  });

  test(`${vendor}: a tool call on the final step anyway is reported, never executed`, async () => {
    const sb = sandbox(vendor);
    server.enqueue({ toolCalls: [{ name: "write_file", input: { path: "executed.txt", content: "ran\n" } }] });
    const r = await sb.run(["--headless", "--permission-mode", "auto", "--max-turns", "1", "do it"]);
    assert.equal(r.code, 3, r.stderr);
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const toolResult = lines.find((l) => l.kind === "tool-result");
    assert.equal(toolResult?.is_error, true);
    assert.match(toolResult?.result, /Not executed/);
    assert.deepEqual([lines.at(-1).kind, lines.at(-1).status, lines.at(-1).is_error], ["result", "max_turns", true]);
    assert.equal(existsSync(join(sb.workspace, "executed.txt")), false);
  });
}

test("--max-turns must be a positive integer: exit 2, one line, no request", async () => {
  const sb = sandbox("anthropic");
  for (const bad of ["0", "-1", "1.5", "x"]) {
    const r = await sb.run(["--max-turns", bad, "hi"]);
    assert.equal(r.code, 2, `--max-turns ${bad}`);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^keen: --max-turns must be a positive integer[^\n]*\n$/);
  }
  assert.equal(server.requests.length, 0);
});

test("maxTurns from config is the default", async () => {
  const sb = sandbox("anthropic", { maxTurns: 1 });
  server.enqueue({ text: "ok" });
  const r = await sb.run(["--format", "json", "hi"]);
  assert.equal(JSON.parse(r.stdout).status, "max_turns");
  assert.equal(toolChoiceOf("anthropic", server.requests[0]!.body), "none");
});
