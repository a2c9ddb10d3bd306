import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines, runKeen } from "./harness.js";

const server = useMockLLMServer();

const SCHEMA = { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { answer: { type: "number" } }, required: ["answer"], additionalProperties: false };

// The sandbox is off where the model only calls structured_output (no command runs, it plays no
// role; with bash available it would warm up in every turn); the test that runs bash turns it on.
function setup(schema: unknown = SCHEMA, config: Record<string, unknown> = { sandbox: { mode: "off" } }) {
  server.reset();
  const sb = makeSandbox(server.url, config);
  const file = join(sb.root, "schema.json");
  writeFileSync(file, typeof schema === "string" ? schema : JSON.stringify(schema));
  return { sb, file };
}
const call = (input: unknown, text?: string) => ({ text, toolCalls: [{ name: "structured_output", input }] });

test("a valid value first time is the printed text and the result's structured_output", async () => {
  const { sb, file } = setup();
  server.enqueue(call({ answer: 42 }, "Here it is.\n<keen_memory>\n- computed 42\n</keen_memory>"));
  const text = await runKeen(["run", "--output-schema", file, "what is 6*7?"], { env: sb.env, cwd: sb.workspace });
  assert.equal(text.code, 0, text.stderr);
  assert.equal(text.stdout, '{"answer":42}\n');
  const body = server.requests[0]!.body;
  assert.deepEqual(body.tools.find((t: any) => t.name === "structured_output").input_schema.required, ["answer"]);
  assert.deepEqual(body.tool_choice, { type: "auto" });

  server.enqueue(call({ answer: 42 }, "Sure.<keen_memory>- secret memory</keen_memory>"));
  const json = await runKeen(["run", "--format", "json", "--output-schema", file, "again"], { env: sb.env, cwd: sb.workspace });
  const result = JSON.parse(json.stdout);
  assert.deepEqual([result.status, result.text, result.structured_output], ["success", '{"answer":42}', { answer: 42 }]);
  assert.doesNotMatch(json.stdout, /keen_memory|secret memory/);
});

test("an invalid value is repaired with the validator's errors", async () => {
  const { sb, file } = setup();
  server.enqueue(call({ answer: "forty-two" }), call({ answer: 42 }));
  const run = await runKeen(["run", "--headless", "--output-schema", file, "q"], { env: sb.env, cwd: sb.workspace });
  assert.equal(run.code, 0, run.stderr);
  const result = parseLines(run.stdout).at(-1)!;
  assert.deepEqual([result.status, result.structured_output], ["success", { answer: 42 }]);
  const repair = server.requests[1]!.body.messages.at(-1).content[0];
  assert.equal(repair.type, "tool_result");
  assert.equal(repair.is_error, true);
  assert.match(repair.content, /Invalid value: value\/answer must be number/);
});

test("a model that answers in text is asked for the call", async () => {
  const { sb, file } = setup();
  server.enqueue({ text: "The answer is 42" }, call({ answer: 42 }));
  const run = await runKeen(["run", "--output-schema", file, "q"], { env: sb.env, cwd: sb.workspace });
  assert.equal(run.stdout, '{"answer":42}\n');
  assert.match(JSON.stringify(server.requests[1]!.body.messages.at(-1)), /Call the structured_output tool now/);
});

test("repairs run out: status error, exit 1", async () => {
  const { sb, file } = setup();
  server.enqueue(call({ answer: "a" }), call({ answer: "b" }), call({ answer: "c" }));
  const run = await runKeen(["run", "--format", "json", "--output-schema", file, "q"], { env: sb.env, cwd: sb.workspace });
  assert.equal(run.code, 1);
  const result = JSON.parse(run.stdout);
  assert.deepEqual([result.status, result.is_error], ["error", true]);
  assert.match(result.errors.join(" "), /no valid value after 2 repairs/);
  assert.equal(server.pending(), 0);
});

test("repairs run out, as JSON lines: the `error` event's error_code is structured_output", async () => {
  const { sb, file } = setup();
  server.enqueue(call({ answer: "a" }), call({ answer: "b" }), call({ answer: "c" }));
  const run = await runKeen(["run", "--headless", "--output-schema", file, "q"], { env: sb.env, cwd: sb.workspace });
  assert.equal(run.code, 1);
  assert.deepEqual(parseLines(run.stdout).filter((e) => e.kind === "error").map((e) => e.error_code), ["structured_output"]);
});

test("a run that reaches its final step still returns schema-valid JSON; only that call runs", async () => {
  const { sb, file } = setup(SCHEMA, {});
  server.enqueue(
    { toolCalls: [{ name: "bash", input: { command: "echo hi" } }] },
    { toolCalls: [{ name: "bash", input: { command: "touch ran.txt" } }, { name: "structured_output", input: { answer: 1 } }] },
  );
  const run = await runKeen(["run", "--format", "json", "--max-turns", "2", "--output-schema", file, "q"], { env: sb.env, cwd: sb.workspace });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.deepEqual([result.status, result.is_error, result.structured_output], ["max_turns", false, { answer: 1 }]);
  const final = server.requests[1]!.body;
  assert.deepEqual(final.tool_choice, { type: "auto" });
  assert.match(JSON.stringify(final.messages.at(-1)), /FINAL STEP.*structured_output/);
  const { existsSync } = await import("node:fs");
  assert.equal(existsSync(join(sb.workspace, "ran.txt")), false);
});

test("a non-object schema is wrapped as the tool's value field", async () => {
  const { sb, file } = setup({ type: "array", items: { type: "string" } });
  server.enqueue(call({ value: ["a", "b"] }));
  const run = await runKeen(["run", "--output-schema", file, "list"], { env: sb.env, cwd: sb.workspace });
  assert.equal(run.stdout, '["a","b"]\n');
});

test("an invalid schema file is a usage error", async () => {
  for (const bad of ["{not json", "[1]", JSON.stringify({ type: "nonsense-type" })]) {
    const { sb, file } = setup(bad);
    const run = await runKeen(["run", "--output-schema", file, "q"], { env: sb.env, cwd: sb.workspace });
    assert.equal(run.code, 2, bad);
    assert.equal(run.stdout, "");
    assert.match(run.stderr, /--output-schema/);
  }
  const { sb } = setup();
  const missing = await runKeen(["run", "--output-schema", "/nonexistent.json", "q"], { env: sb.env, cwd: sb.workspace });
  assert.equal(missing.code, 2);
});
