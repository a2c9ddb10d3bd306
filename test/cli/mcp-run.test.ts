import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startHttpMcpServer } from "../fakes/mcp-http-server.mjs";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";

// `keen run` with MCP tools, in this process (test/cli/in-process.ts), the fake MCP server's tools
// served over HTTP from this process too (test/fakes/mcp-http-server.mjs): which tools a run offers
// under the filters, what a permission mode lets run and what an OpenAI model is sent are Keen's
// decisions, whatever the transport. A case costs milliseconds instead of a Keen start and a server
// start. test/e2e/mcp.test.ts keeps the stdio server in a spawned run and in `keen stdio`.

const server = useMockLLMServer();
let mcp: Awaited<ReturnType<typeof startHttpMcpServer>>;
before(async () => {
  mcp = await startHttpMcpServer();
});
after(() => mcp.close());

const BUILTIN_TOOLS = ["bash", "read_file", "write_file", "edit_file", "grep", "glob", "list", "todo_write", "skill", "task", "web_fetch", "job_output", "job_kill"];
const FAKE_TOOLS = ["echo", "slow", "fail", "image", "structured", "add_tool", "env", "die", "spawn_child"];
const mcpNames = (name: string) => FAKE_TOOLS.map((t) => `mcp__${name}__${t}`);
const http = () => ({ type: "http", url: mcp.url });
/** A stream line without what differs between runs. */
const strip = ({ conversation_id: _c, ts: _t, seq: _s, ...rest }: Record<string, any>) => rest;
const parseLines = (stdout: string) => stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, any>);
// No command runs in these turns (MCP tools only): the sandbox plays no role (and must not warm up in this process).
const run = ["run", "--headless", "--no-stdin", "--sandbox", "off"];

test("--allowed-tools and --disallowed-tools take mcp__ names and mcp__<server>__* patterns; a name no server offers is a warning", async () => {
  const sb = makeInProcessSandbox(server, { mcpServers: { fake: http(), other: http() } });
  const toolsOf = async (args: string[]) => {
    server.reset();
    server.enqueue({ text: "ok" });
    const r = await sb.keen([...run, ...args, "go"]);
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
  writeFileSync(join(sb.home, "config.json"), JSON.stringify({ stdinGraceMs: 300, mcpServers: { fake: http() }, tools: { allowed: ["mcp__fake__e*"] } }));
  assert.deepEqual((await toolsOf([])).tools, ["mcp__fake__echo", "mcp__fake__env"]);
  // A built-in name that does not exist stays a usage error.
  const bad = await sb.keen([...run, "--allowed-tools", "nope", "go"]);
  assert.deepEqual([bad.code, bad.stdout], [2, ""]);
  assert.match(bad.stderr, /^keen: unknown tool "nope"; tools: bash, /);
});

test("permission modes in keen run: accept-edits runs a read-only MCP tool (readOnlyHint); any other needs an approval a one-shot run cannot get", async () => {
  const sb = makeInProcessSandbox(server, { mcpServers: { fake: http() } });
  server.enqueue({ toolCalls: [{ id: "r", name: "mcp__fake__echo", input: { text: "x" } }, { id: "w", name: "mcp__fake__env", input: { name: "HOME" } }] }, { text: "done" });
  const r = await sb.keen([...run, "--permission-mode", "accept-edits", "go"]);
  assert.equal(r.code, 0, r.stderr);
  // read-only and ask: test/e2e/mcp.test.ts's keen stdio test; auto, the default of `keen run`, runs both (the e2e runs).
  assert.deepEqual(parseLines(r.stdout).filter((l) => l.kind === "tool-result").map((l) => [l.tool_call_id, l.is_error, l.result]), [
    ["r", false, "echo: x"],
    ["w", true, "Not executed: mcp__fake__env needs the user's approval in accept-edits mode, and this one-shot run has nobody to ask. Do without it."],
  ]);
  assert.deepEqual([server.unexpected, server.rejected], [[], []]);
});

test("an OpenAI model gets the image described in the tool result's text (its tool messages take text only)", async () => {
  const sb = makeInProcessSandbox(server, { mcpServers: { fake: http() } });
  server.enqueue({ toolCalls: [{ id: "i", name: "mcp__fake__image", input: {} }] }, { text: "done" });
  const r = await sb.keen([...run, "--model", "openai/gpt-4.1", "go"], { env: { OPENAI_API_KEY: "test-key" } });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(parseLines(r.stdout).find((l) => l.kind === "tool-result")!.result, "a picture:\n[image image/png, 72 bytes]");
  const tool = server.requests[1]!.body.messages.find((m: any) => m.role === "tool");
  assert.deepEqual(tool, { role: "tool", tool_call_id: "i", content: "a picture:\n[image image/png, 72 bytes]" });
  assert.deepEqual([server.unexpected, server.rejected], [[], []]);
});

// Was a spawned run in test/e2e/mcp-add.test.ts: which servers --mcp-config names is Keen's decision, the transport plays no role.
test("--mcp-config takes inline JSON as well as a file", async () => {
  const sb = makeInProcessSandbox(server);
  const toolsWith = async (config: string) => {
    server.reset();
    server.enqueue({ text: "ok" });
    const r = await sb.keen([...run, "--mcp-config", config, "go"]);
    assert.equal(r.code, 0, r.stderr);
    return (parseLines(r.stdout)[0]!.tools as string[]).filter((t) => t.startsWith("mcp__"));
  };
  assert.deepEqual(await toolsWith(JSON.stringify({ mcpServers: { inl: http() } })), mcpNames("inl"));
  const file = join(sb.workspace, "servers.json");
  writeFileSync(file, JSON.stringify({ mcpServers: { fromfile: http() } }));
  assert.deepEqual(await toolsWith(file), mcpNames("fromfile"));
});
