import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";

// `keen run --output-schema` in this process (test/cli/in-process.ts): what Keen decides (the tool it
// offers, the repairs, the value it prints, the usage errors) costs milliseconds here instead of a
// Keen start each. test/e2e/structured-output.test.ts keeps a spawned run (the printed value, exit 0)
// and the run whose last step also runs bash.

const server = useMockLLMServer();

const SCHEMA = { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object", properties: { answer: { type: "number" } }, required: ["answer"], additionalProperties: false };

// The model only calls structured_output: no command runs, so the sandbox plays no role (and must not warm up in this process).
const run = ["run", "--no-stdin", "--sandbox", "off"];

function setup(schema: unknown = SCHEMA) {
  const sb = makeInProcessSandbox(server);
  const file = join(sb.root, "schema.json");
  writeFileSync(file, typeof schema === "string" ? schema : JSON.stringify(schema));
  return { sb, file };
}
/** JSON lines, parsed. */
const parseLines = (stdout: string) => stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, any>);
const call = (input: unknown, text?: string) => ({ text, toolCalls: [{ name: "structured_output", input }] });

test("--format json: the value is the result's text and structured_output; the memory block is not shown", async () => {
  const { sb, file } = setup();
  server.enqueue(call({ answer: 42 }, "Sure.<keen_memory>- secret memory</keen_memory>"));
  const json = await sb.keen([...run, "--format", "json", "--output-schema", file, "again"]);
  assert.equal(json.code, 0, json.stderr);
  const result = JSON.parse(json.stdout);
  assert.deepEqual([result.status, result.text, result.structured_output], ["success", '{"answer":42}', { answer: 42 }]);
  assert.doesNotMatch(json.stdout, /keen_memory|secret memory/);
  const body = server.requests[0]!.body;
  assert.deepEqual(body.tools.find((t: any) => t.name === "structured_output").input_schema.required, ["answer"]);
  assert.deepEqual(body.tool_choice, { type: "auto" });
});

test("an invalid value is repaired with the validator's errors", async () => {
  const { sb, file } = setup();
  server.enqueue(call({ answer: "forty-two" }), call({ answer: 42 }));
  const r = await sb.keen([...run, "--headless", "--output-schema", file, "q"]);
  assert.equal(r.code, 0, r.stderr);
  const result = parseLines(r.stdout).at(-1)!;
  assert.deepEqual([result.status, result.structured_output], ["success", { answer: 42 }]);
  const repair = server.requests[1]!.body.messages.at(-1).content[0];
  assert.equal(repair.type, "tool_result");
  assert.equal(repair.is_error, true);
  assert.match(repair.content, /Invalid value: value\/answer must be number/);
});

test("a model that answers in text is asked for the call", async () => {
  const { sb, file } = setup();
  server.enqueue({ text: "The answer is 42" }, call({ answer: 42 }));
  const r = await sb.keen([...run, "--output-schema", file, "q"]);
  assert.equal(r.stdout, '{"answer":42}\n');
  assert.match(JSON.stringify(server.requests[1]!.body.messages.at(-1)), /Call the structured_output tool now/);
});

test("repairs run out: status error, exit 1; as JSON lines the `error` event's error_code is structured_output", async () => {
  const { sb, file } = setup();
  server.enqueue(call({ answer: "a" }), call({ answer: "b" }), call({ answer: "c" }));
  const json = await sb.keen([...run, "--format", "json", "--output-schema", file, "q"]);
  assert.equal(json.code, 1);
  const result = JSON.parse(json.stdout);
  assert.deepEqual([result.status, result.is_error], ["error", true]);
  assert.match(result.errors.join(" "), /no valid value after 2 repairs/);
  assert.equal(server.pending(), 0);

  server.enqueue(call({ answer: "a" }), call({ answer: "b" }), call({ answer: "c" }));
  const lines = await sb.keen([...run, "--headless", "--output-schema", file, "q"]);
  assert.equal(lines.code, 1);
  assert.deepEqual(parseLines(lines.stdout).filter((e) => e.kind === "error").map((e) => e.error_code), ["structured_output"]);
});

test("a non-object schema is wrapped as the tool's value field", async () => {
  const { sb, file } = setup({ type: "array", items: { type: "string" } });
  server.enqueue(call({ value: ["a", "b"] }));
  const r = await sb.keen([...run, "--output-schema", file, "list"]);
  assert.equal(r.stdout, '["a","b"]\n');
});

test("an invalid or missing schema file is a usage error: exit 2, nothing on stdout, no request", async () => {
  for (const bad of ["{not json", "[1]", JSON.stringify({ type: "nonsense-type" })]) {
    const { sb, file } = setup(bad);
    const r = await sb.keen([...run, "--output-schema", file, "q"]);
    assert.equal(r.code, 2, bad);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /--output-schema/);
  }
  const { sb } = setup();
  const missing = await sb.keen([...run, "--output-schema", "/nonexistent.json", "q"]);
  assert.equal(missing.code, 2);
  assert.deepEqual(server.requests, []);
});
