import { test } from "node:test";
import assert from "node:assert/strict";
import { cleanSchema, mcpToolName, toToolResult } from "../../app/mcp/tools.js";

test("tool names: mcp__<server>__<tool>, in the providers' alphabet, at most 64 characters", () => {
  assert.equal(mcpToolName("gh", "list_issues"), "mcp__gh__list_issues");
  assert.equal(mcpToolName("gh", "files/read.v2"), "mcp__gh__files_read_v2");
  assert.equal(mcpToolName("s", "x".repeat(100)).length, 64);
});

test("schemas are cleaned up for the providers: an object at the top, no top-level combinators, required names that exist", () => {
  assert.deepEqual(cleanSchema({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", properties: { a: { type: "string" } }, required: ["a", "b"] }), {
    type: "object", properties: { a: { type: "string" } }, required: ["a"],
  });
  assert.deepEqual(cleanSchema({ anyOf: [{ type: "object" }, { type: "string" }] }), { type: "object", properties: {} });
  assert.deepEqual(cleanSchema(undefined), { type: "object", properties: {} });
  assert.deepEqual(cleanSchema({ type: "object", properties: [], additionalProperties: false, required: "a" }), {
    type: "object", properties: {}, additionalProperties: false,
  });
});

test("results: text, described media, resources, isError, structured content, the cut", () => {
  const huge = "A".repeat(Math.ceil(((5 * 1024 * 1024 + 3) * 4) / 3));
  const tooBig = toToolResult({ content: [{ type: "image", data: huge, mimeType: "image/png" }] }, "s", "t");
  assert.deepEqual([tooBig.content, tooBig.images], [`[image image/png, ${Math.floor((huge.length * 3) / 4)} bytes; too large to send]`, undefined]);
  const bigStructured = toToolResult({ content: [{ type: "text", text: "see details" }], structuredContent: { rows: "r".repeat(200_000) } }, "s", "t");
  assert.deepEqual(bigStructured.details, { server: "s", tool: "t", structured_chars: 200_011 });
  assert.deepEqual(toToolResult({ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }, "s", "t"), {
    content: "a\nb", is_error: false, details: { server: "s", tool: "t" },
  });
  const media = toToolResult({ content: [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }] }, "s", "t");
  assert.equal(media.content, "[audio audio/wav, 3 bytes]");
  assert.deepEqual(media.details!.media, [{ type: "audio", mimeType: "audio/wav", bytes: 3 }]);
  assert.equal(media.images, undefined, "only images go to the model");
  const image = toToolResult({ content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] }, "s", "t");
  assert.deepEqual([image.content, image.images], ["[image image/png, 3 bytes]", [{ media_type: "image/png", data: "AAAA" }]]);
  assert.equal(toToolResult({ content: [{ type: "resource", resource: { uri: "file:///a", text: "inside" } }] }, "s", "t").content, "inside");
  assert.equal(toToolResult({ content: [{ type: "resource_link", uri: "file:///b", name: "b" }] }, "s", "t").content, "[resource file:///b (b)]");
  assert.deepEqual(toToolResult({ content: [], isError: true }, "s", "t"), { content: "The tool failed without a message.", is_error: true, details: { server: "s", tool: "t" } });
  assert.equal(toToolResult({ content: [] }, "s", "t").content, "(no output)");
  const long = toToolResult({ content: [{ type: "text", text: "x".repeat(100_010) }] }, "s", "t").content;
  assert.ok(long.endsWith("\n[cut: the result had 100010 characters; the first 100000 are shown]"));
});
