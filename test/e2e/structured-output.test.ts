import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, runKeen } from "./harness.js";

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

// The repairs, the JSON and JSON-lines results, the wrapped non-object schema and the usage errors run
// in process: test/cli/structured-output.test.ts. Here the spawned side: the value the process prints.
test("a valid value first time is the printed text", async () => {
  const { sb, file } = setup();
  server.enqueue(call({ answer: 42 }, "Here it is.\n<keen_memory>\n- computed 42\n</keen_memory>"));
  const text = await runKeen(["run", "--output-schema", file, "what is 6*7?"], { env: sb.env, cwd: sb.workspace });
  assert.equal(text.code, 0, text.stderr);
  assert.equal(text.stdout, '{"answer":42}\n');
  const body = server.requests[0]!.body;
  assert.deepEqual(body.tools.find((t: any) => t.name === "structured_output").input_schema.required, ["answer"]);
  assert.deepEqual(body.tool_choice, { type: "auto" });
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
