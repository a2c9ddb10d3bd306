/**
 * MCP end to end: `bin/keen run --headless` against the mock LLM server with
 * the fake MCP server (test/fakes/mcp-server.mjs) as a stdio server: the tools
 * offered, results of every content kind, a tool list that changes, permission
 * modes in `keen stdio`. The filters, accept-edits in `keen run` and an OpenAI
 * model's image run in process: test/cli/mcp-run.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { type MockReplyStep } from "../fakes/mock-llm-server.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { parseLines } from "./harness.js";
import { startStdio } from "./stdio-client.js";
import { PNG_BASE64 } from "../fakes/mcp-tools.mjs";
import { BUILTIN_TOOLS, fakeServer, mcpNames, strip, mcpSandbox } from "./mcp-helpers.js";

const server = useMockLLMServer();

type Sandbox = ReturnType<typeof mcpSandbox>;

async function run(sb: Sandbox, calls: NonNullable<MockReplyStep["toolCalls"]>, args: string[] = [], env: Record<string, string> = {}) {
  server.enqueue({ toolCalls: calls }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", ...args, "go"], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(server.unexpected, []);
  assert.deepEqual(server.rejected, []);
  return { ...r, lines: parseLines(r.stdout) };
}

// The filters, accept-edits and an OpenAI model's image run in process, the same tools over HTTP:
// test/cli/mcp-run.test.ts. Here the stdio server in a spawned run and in `keen stdio`.

// One run for both (a Keen and a server start less): env values of MCP servers are secrets.
test("a run calls MCP tools end to end: text, image, structured and error results, each as the model and the stream see it; a result that echoes a server's env value is redacted everywhere", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: fakeServer(undefined, { env: { FAKE_SETTING: "value-of-${MY_SETTING}" } }) } });
  const { lines, stderr, stdout } = await run(sb, [
    { id: "c1", name: "mcp__fake__echo", input: { text: "hi" } },
    { id: "c2", name: "mcp__fake__image", input: {} },
    { id: "c3", name: "mcp__fake__structured", input: {} },
    { id: "c4", name: "mcp__fake__fail", input: {} },
    { id: "c5", name: "mcp__fake__env", input: { name: "FAKE_SETTING" } },
  ], [], { MY_SETTING: "plain-but-configured" });
  assert.equal(stderr, "");
  const tools = [...BUILTIN_TOOLS, ...mcpNames("fake")];
  const start = lines[0]!;
  assert.deepEqual([start.kind, start.tools], ["session-start", tools]);
  assert.deepEqual(strip(lines[1]!), { kind: "mcp-server", server: "fake", status: "connected", tools: mcpNames("fake") });
  const results = lines.filter((l) => l.kind === "tool-result").map(strip);
  const image = "a picture:\n[image image/png, 72 bytes]";
  assert.deepEqual(results, [
    { kind: "tool-result", role: "assistant", tool_name: "mcp__fake__echo", tool_call_id: "c1", result: "echo: hi", is_error: false, details: { server: "fake", tool: "echo" } },
    {
      kind: "tool-result", role: "assistant", tool_name: "mcp__fake__image", tool_call_id: "c2", result: image, is_error: false,
      details: { server: "fake", tool: "image", media: [{ type: "image", mimeType: "image/png", bytes: 72 }] },
    },
    {
      kind: "tool-result", role: "assistant", tool_name: "mcp__fake__structured", tool_call_id: "c3", result: '{"answer":42}', is_error: false,
      details: { server: "fake", tool: "structured", structured: { answer: 42 } },
    },
    { kind: "tool-result", role: "assistant", tool_name: "mcp__fake__fail", tool_call_id: "c4", result: "it failed on purpose", is_error: true, details: { server: "fake", tool: "fail" } },
    { kind: "tool-result", role: "assistant", tool_name: "mcp__fake__env", tool_call_id: "c5", result: "[redacted]", is_error: false, details: { server: "fake", tool: "env" } },
  ]);
  assert.doesNotMatch(JSON.stringify(server.requests) + stdout + stderr, /plain-but-configured/);
  // The provider got every tool with a clean object schema, and the results as the stream showed them.
  const offered = server.requests[0]!.body.tools as { name: string; input_schema: Record<string, unknown> }[];
  assert.deepEqual(offered.map((t) => t.name), tools);
  assert.deepEqual(offered.find((t) => t.name === "mcp__fake__echo")!.input_schema, {
    type: "object", properties: { text: { type: "string" } }, required: ["text"],
  });
  const sent = server.requests[1]!.body.messages.at(-1).content;
  const textOf = (b: any) => (typeof b.content === "string" ? b.content : b.content.filter((c: any) => c.type === "text").map((c: any) => c.text).join(""));
  assert.deepEqual(sent.map((b: any) => [b.tool_use_id, b.is_error ?? false, textOf(b)]), results.map((r) => [r.tool_call_id, r.is_error, r.result]));
  // Anthropic takes images in tool results: the picture itself went along.
  assert.deepEqual(sent[1].content[1], { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_BASE64 } });
  assert.deepEqual(lines.at(-1)!.status, "success");
});

test("a tool that changes the tool list: the next request of the same turn offers the new tool, and an event says so", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: fakeServer() } });
  server.enqueue({ toolCalls: [{ name: "mcp__fake__add_tool", input: {} }] }, { toolCalls: [{ id: "a", name: "mcp__fake__added", input: {} }] }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  const changed = lines.filter((l) => l.kind === "mcp-server" && l.status === "tools-changed");
  assert.deepEqual(changed.map(strip), [{ kind: "mcp-server", server: "fake", status: "tools-changed", tools: [...mcpNames("fake"), "mcp__fake__added"] }]);
  assert.ok(!server.requests[0]!.body.tools.some((t: any) => t.name === "mcp__fake__added"));
  assert.ok(server.requests[1]!.body.tools.some((t: any) => t.name === "mcp__fake__added"));
  assert.deepEqual(lines.filter((l) => l.kind === "tool-result").map((l) => [l.tool_name, l.result]), [
    ["mcp__fake__add_tool", "added a tool"], ["mcp__fake__added", "added works"],
  ]);
});

test("keen stdio in ask mode: a read-only MCP tool runs at once, any other asks first; the answer lets it run. In read-only mode only the read-only one runs", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: fakeServer() } });
  const client = startStdio([], sb.env, sb.workspace);
  try {
    server.enqueue(
      { toolCalls: [{ id: "r", name: "mcp__fake__echo", input: { text: "look" } }, { id: "w", name: "mcp__fake__env", input: { name: "NOPE" } }] },
      { text: "done" },
    );
    client.send({ kind: "prompt", id: "1", text: "go" });
    const ask = await client.next((l) => l.kind === "permission-request");
    assert.deepEqual([ask.tool_name, ask.tool_call_id], ["mcp__fake__env", "w"]);
    client.send({ kind: "permission-response", id: "2", request_id: ask.request_id, decision: "allow-once" });
    assert.equal((await client.response("1")).ok, true);
    const lines = client.lines;
    assert.equal(lines.filter((l) => l.kind === "permission-request").length, 1, "echo never asked");
    assert.deepEqual(lines.filter((l) => l.kind === "tool-result").map((l) => [l.tool_call_id, l.is_error, l.result]), [["r", false, "echo: look"], ["w", false, "(unset)"]]);
    assert.deepEqual(lines.filter((l) => l.kind === "mcp-server").map((l) => l.status), ["connected"]);

    // The same process, switched to read-only.
    client.send({ kind: "set-permission-mode", id: "3", mode: "read-only" });
    assert.equal((await client.response("3")).ok, true);
    const from = client.lines.length;
    server.enqueue(
      { toolCalls: [{ id: "r2", name: "mcp__fake__echo", input: { text: "x" } }, { id: "w2", name: "mcp__fake__env", input: { name: "HOME" } }] },
      { text: "done" },
    );
    client.send({ kind: "prompt", id: "4", text: "again" });
    assert.equal((await client.response("4")).ok, true);
    const later = client.lines.slice(from);
    assert.equal(later.filter((l) => l.kind === "permission-request").length, 0, "read-only refuses without asking");
    assert.deepEqual(later.filter((l) => l.kind === "tool-result").map((l) => [l.tool_call_id, l.is_error, l.result]), [
      ["r2", false, "echo: x"],
      ["w2", true, "Not executed: the session is in read-only mode, so mcp__fake__env cannot run."],
    ]);
  } finally {
    const end = await client.end();
    assert.equal(end.code, 0, end.stderr);
  }
});
