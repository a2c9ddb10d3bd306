import { test } from "node:test";
import assert from "node:assert/strict";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines, runKeen } from "./harness.js";

const server = useMockLLMServer();

type Vendor = "anthropic" | "openai";
const toolStep = (i: number) => ({ toolCalls: [{ name: "bash", input: { command: `echo step${i}` } }] });

function sandbox(vendor: Vendor) {
  const sb = makeSandbox(server.url);
  if (vendor === "openai") Object.assign(sb.env, { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.openaiBaseURL });
  return sb;
}
const modelArgs = (vendor: Vendor) => (vendor === "openai" ? ["--model", "openai/gpt-4.1"] : []);

function toolChoiceOf(vendor: Vendor, body: any): string | undefined {
  if (vendor === "anthropic") return body.tool_choice?.type;
  return body.tool_choice;
}

/** All user-visible text the request carries, to find injected prompts in. */
function lastUserText(body: any): string {
  const last = body.messages.at(-1);
  if (typeof last.content === "string") return last.content;
  return last.content.map((b: any) => b.text ?? "").join("\n");
}

for (const vendor of ["anthropic", "openai"] as Vendor[]) {
  for (const n of [1, 2, 3]) {
    test(`${vendor}: --max-turns ${n} with a model that keeps calling tools ends with the committed answer`, async () => {
      server.reset();
      const sb = sandbox(vendor);
      for (let i = 1; i < n; i++) server.enqueue(toolStep(i));
      server.enqueue({ text: "The answer is 42." });
      const run = await runKeen(["run", ...modelArgs(vendor), "--max-turns", String(n), "what is the answer?"], { env: sb.env, cwd: sb.workspace });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, "The answer is 42.\n");
      assert.deepEqual(server.rejected, []);
      const bodies = server.requests.map((r) => r.body);
      assert.equal(bodies.length, n);
      bodies.forEach((body, i) => {
        const step = i + 1;
        assert.ok(body.tools?.length, `step ${step} keeps the tool definitions`);
        assert.equal(toolChoiceOf(vendor, body) === "none", step === n, `tool_choice none on step ${step} of ${n}`);
        const text = lastUserText(body);
        assert.equal(/Step budget: 2 steps remain/.test(text), n >= 2 && step === n - 1, `pre-warning on step ${step} of ${n}`);
        assert.equal(/FINAL STEP/.test(text), step === n, `final prompt on step ${step} of ${n}`);
      });
    });
  }

  test(`${vendor}: status max_turns in the JSON result, and no injected prompt is stored or replayed`, async () => {
    server.reset();
    const sb = sandbox(vendor);
    server.enqueue(toolStep(1), { text: "Best guess: 7." });
    const run = await runKeen(["run", ...modelArgs(vendor), "--format", "json", "--max-turns", "2", "guess"], { env: sb.env, cwd: sb.workspace });
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout);
    assert.deepEqual([result.status, result.is_error, result.text, result.num_turns], ["max_turns", false, "Best guess: 7.", 2]);

    server.enqueue(toolStep(2), toolStep(3), { text: "Again: 7." });
    const resumed = await runKeen(["run", ...modelArgs(vendor), "--session", result.session_id, "--max-turns", "3", "once more"], { env: sb.env, cwd: sb.workspace });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(resumed.stdout, "Again: 7.\n");
    const bodies = server.requests.map((r) => r.body);
    const firstOfTurn2 = JSON.stringify(bodies[2].messages);
    assert.doesNotMatch(firstOfTurn2, /FINAL STEP|Step budget/, "injected prompts are never replayed");
    assert.match(firstOfTurn2, /Best guess: 7\./);
    assert.match(lastUserText(bodies[3]), /Step budget: 2 steps remain/, "the flag is honoured after resume");
    assert.equal(toolChoiceOf(vendor, bodies[4]), "none");
    // The store read in this process (what `keen sessions show --json` prints, without a Keen start).
    const { events } = await sb.show(result.session_id);
    assert.doesNotMatch(JSON.stringify(events.filter((e) => e.kind !== "prompt-injection")), /FINAL STEP|Step budget/);
    const users = events.filter((e) => e.kind === "user-message");
    assert.deepEqual(users.map((e: any) => e.message.headless), [true, true]);
  });

  test(`${vendor}: a tool call on the final step anyway is reported, never executed`, async () => {
    server.reset();
    const sb = sandbox(vendor);
    server.enqueue({ toolCalls: [{ name: "bash", input: { command: "touch executed.txt" } }] });
    const run = await runKeen(["run", ...modelArgs(vendor), "--headless", "--max-turns", "1", "do it"], { env: sb.env, cwd: sb.workspace });
    assert.equal(run.code, 3, run.stderr);
    const lines = parseLines(run.stdout);
    const toolResult = lines.find((l) => l.kind === "tool-result");
    assert.equal(toolResult?.is_error, true);
    assert.match(toolResult?.result, /Not executed/);
    const result = lines.at(-1)!;
    assert.deepEqual([result.kind, result.status, result.is_error], ["result", "max_turns", true]);
    const { existsSync } = await import("node:fs");
    assert.equal(existsSync(`${sb.workspace}/executed.txt`), false);
  });
}

test("--max-turns must be a positive integer", async () => {
  const sb = sandbox("anthropic");
  for (const bad of ["0", "-1", "1.5", "x"]) {
    const run = await runKeen(["run", "--max-turns", bad, "hi"], { env: sb.env, cwd: sb.workspace });
    assert.equal(run.code, 2, `--max-turns ${bad}`);
    assert.equal(run.stdout, "");
    assert.match(run.stderr, /--max-turns must be a positive integer/);
  }
});

test("maxTurns from config is the default", async () => {
  server.reset();
  const sb = makeSandbox(server.url, { maxTurns: 1 });
  server.enqueue({ text: "ok" });
  const run = await runKeen(["run", "--format", "json", "hi"], { env: sb.env, cwd: sb.workspace });
  assert.equal(JSON.parse(run.stdout).status, "max_turns");
  assert.equal(toolChoiceOf("anthropic", server.requests[0]!.body), "none");
});
