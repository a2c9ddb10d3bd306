/**
 * MCP end to end: `bin/keen run --headless` against the mock LLM server with
 * the fake MCP server (test/fakes/mcp-server.mjs) as a stdio server: the tools
 * offered, results of every content kind, names and filters, permission modes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
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

test("a run calls MCP tools end to end: text, image, structured and error results, each as the model and the stream see it", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: fakeServer() } });
  const { lines, stderr } = await run(sb, [
    { id: "c1", name: "mcp__fake__echo", input: { text: "hi" } },
    { id: "c2", name: "mcp__fake__image", input: {} },
    { id: "c3", name: "mcp__fake__structured", input: {} },
    { id: "c4", name: "mcp__fake__fail", input: {} },
  ]);
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
  ]);
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

test("--allowed-tools and --disallowed-tools take mcp__ names and mcp__<server>__* patterns; a name no server offers is a warning", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: fakeServer(), other: fakeServer() } });
  const toolsOf = async (args: string[]) => {
    server.reset();
    server.enqueue({ text: "ok" });
    const r = await sb.run(["run", "--headless", "--no-stdin", ...args, "go"]);
    assert.equal(r.code, 0, r.stderr);
    const lines = parseLines(r.stdout);
    assert.deepEqual(server.requests[0]!.body.tools.map((t: any) => t.name), lines[0]!.tools, "offered = announced");
    return { tools: lines[0]!.tools as string[], stderr: r.stderr, lines };
  };
  // The matching itself (exact names, * patterns, allow and deny together) is a table in test/mcp/config.test.ts;
  // here each way in (--allowed-tools, --disallowed-tools, config) once, with a name no server offers.
  const missing = await toolsOf(["--allowed-tools", "read_file,mcp__fake__echo,mcp__fake__nope"]);
  assert.deepEqual(missing.tools, ["read_file", "mcp__fake__echo"]);
  assert.equal(missing.stderr, 'keen: mcp: no MCP server offers a tool named "mcp__fake__nope" (--allowed-tools, --disallowed-tools or config)\n');
  assert.deepEqual(missing.lines.filter((l) => l.kind === "mcp-server" && l.status === "warning").map(strip), [
    { kind: "mcp-server", server: "", status: "warning", tools: [], message: 'no MCP server offers a tool named "mcp__fake__nope" (--allowed-tools, --disallowed-tools or config)' },
  ]);
  assert.deepEqual((await toolsOf(["--disallowed-tools", "mcp__fake__*,bash"])).tools, [...BUILTIN_TOOLS.slice(1).filter((name) => !name.startsWith("job_")), ...mcpNames("other")]);
  // Config patterns work like flags.
  writeFileSync(join(sb.home, "config.json"), JSON.stringify({ stdinGraceMs: 300, sandbox: { mode: "off" }, mcpServers: { fake: fakeServer() }, tools: { allowed: ["mcp__fake__e*"] } }));
  assert.deepEqual((await toolsOf([])).tools, ["mcp__fake__echo", "mcp__fake__env"]);
  // A built-in name that does not exist stays a usage error.
  const bad = await sb.run(["run", "--headless", "--no-stdin", "--allowed-tools", "nope", "go"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^keen: unknown tool "nope"; tools: bash, /);
});

test("permission modes in keen run: accept-edits runs a read-only MCP tool (readOnlyHint); any other needs an approval a one-shot run cannot get", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: fakeServer() } });
  const calls = [{ id: "r", name: "mcp__fake__echo", input: { text: "x" } }, { id: "w", name: "mcp__fake__env", input: { name: "HOME" } }];
  const results = async (mode: string) =>
    (await run(sb, calls, ["--permission-mode", mode])).lines.filter((l) => l.kind === "tool-result").map((l) => [l.tool_call_id, l.is_error, l.result]);
  // read-only: the keen stdio test below, in the same process as ask mode.
  assert.deepEqual(await results("accept-edits"), [
    ["r", false, "echo: x"],
    ["w", true, "Not executed: mcp__fake__env needs the user's approval in accept-edits mode, and this one-shot run has nobody to ask. Do without it."],
  ]);
  // auto, the default of `keen run`, runs both: the env tool runs in the secrets test below.
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

test("env values and headers of MCP servers are secrets: a tool result that echoes one is redacted everywhere", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: fakeServer(undefined, { env: { FAKE_SETTING: "value-of-${MY_SETTING}" } }) } });
  server.enqueue({ toolCalls: [{ id: "e", name: "mcp__fake__env", input: { name: "FAKE_SETTING" } }] }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"], { env: { MY_SETTING: "plain-but-configured" } });
  assert.equal(r.code, 0, r.stderr);
  const result = parseLines(r.stdout).find((l) => l.kind === "tool-result")!;
  assert.equal(result.result, "[redacted]");
  assert.doesNotMatch(JSON.stringify(server.requests) + r.stdout + r.stderr, /plain-but-configured/);
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

test("an OpenAI model gets the image described in the tool result's text (its tool messages take text only)", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: fakeServer() } });
  const { lines } = await run(sb, [{ id: "i", name: "mcp__fake__image", input: {} }], ["--model", "openai/gpt-4.1"], { OPENAI_API_KEY: "test-key" });
  assert.equal(lines.find((l) => l.kind === "tool-result")!.result, "a picture:\n[image image/png, 72 bytes]");
  const tool = server.requests[1]!.body.messages.find((m: any) => m.role === "tool");
  assert.deepEqual(tool, { role: "tool", tool_call_id: "i", content: "a picture:\n[image image/png, 72 bytes]" });
});
