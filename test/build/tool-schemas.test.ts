/**
 * The tools' JSON Schemas are converted at build time (scripts/tool-schemas.mjs) and carried in
 * keen.cjs, so a run does not convert them. What the model is sent must not change by it: the tool
 * list of a built Keen's first request is compared, byte for byte, with zod's conversion of the
 * source's schemas in this process.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { test } from "node:test";
import * as z from "zod";
import { makeSandbox } from "../e2e/harness.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import "../../app/tools/index.js";
import { convertToolSchemas } from "../../app/tools/define.js";

const server = useMockLLMServer();

test("a built Keen sends the model the tools' input schemas that zod makes of the source, byte for byte", async () => {
  const sandbox = makeSandbox(server.url);
  spawnSync("git", ["init", "-q"], { cwd: sandbox.workspace });
  server.enqueue({ text: "hi" });
  const run = await sandbox.run(["run", "--sandbox", "off", "hi"]);
  assert.equal(run.code, 0, run.stderr);
  const sent: Array<{ name: string; input_schema: unknown }> = server.requests[0]!.body.tools;
  const fromSource = convertToolSchemas();
  assert.ok(sent.length >= 10, `the request offers the built-in tools: ${sent.map((t) => t.name).join(", ")}`);
  for (const tool of sent) {
    assert.ok(fromSource[tool.name], `${tool.name} declares its input with toolInput`);
    assert.equal(JSON.stringify(tool.input_schema), JSON.stringify(fromSource[tool.name]), tool.name);
  }
});

test("keen.cjs carries the build's table: the placeholder is gone and a schema's text is in it", () => {
  const bundle = readFileSync(resolve(import.meta.dirname, "../../dist/keen.cjs"), "utf8");
  assert.doesNotMatch(bundle, /__KEEN_TOOL_SCHEMAS__/);
  // The table is a JSON string, keyed by tool name (its quotes escaped or not, as esbuild chose the string's).
  assert.match(bundle, /\\?"job_kill\\?":\{\\?"type\\?":\\?"object/);
  // A JSON string, not an object: esbuild would make an object a module that every module of the bundle initialises.
  assert.doesNotMatch(bundle, /init_define_KEEN|define_KEEN_TOOL_SCHEMAS/);
});

test("defineTool takes a declared input's JSON Schema from the build's table, and converts one the table lacks", async () => {
  const global = globalThis as { __KEEN_TOOL_SCHEMAS__?: unknown };
  global.__KEEN_TOOL_SCHEMAS__ = JSON.stringify({ probe: { type: "object", from: "the build" } });
  try {
    // A module instance of its own, which reads the table when evaluated.
    const fresh: typeof import("../../app/tools/define.js") = await import(`../../app/tools/define.js?table=${Date.now()}`);
    const run = async () => ({ content: "", is_error: false });
    const probe = fresh.toolInput("probe", () => z.object({ a: z.string() }));
    assert.deepEqual(fresh.defineTool("probe", "", probe, run).definition.inputSchema, { type: "object", from: "the build" });
    assert.throws(() => fresh.toolInput("probe", () => z.object({ b: z.string() })), /tool input "probe" is declared twice/);
    const other = fresh.toolInput("other", () => z.object({ a: z.string() }));
    assert.deepEqual(fresh.defineTool("other", "", other, run).definition.inputSchema, {
      type: "object", properties: { a: { type: "string" } }, required: ["a"], additionalProperties: false,
    });
  } finally {
    delete global.__KEEN_TOOL_SCHEMAS__;
  }
});
