/**
 * The commands Claude Code users type: `keen mcp add` (stdio with -e and `--`,
 * http and sse with --header, --scope user|project), `keen mcp remove`,
 * `--mcp-config` with inline JSON; a `.mcp.json` written by `claude mcp add
 * --scope project` works unchanged. Writes keep every other key and leave no
 * temporary file; bad input is one line on stderr and exit 2.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { startHttpMcpServer } from "../fakes/mcp-http-server.mjs";
import { inProcess } from "../cli/in-process.js";
import { parseLines } from "./harness.js";
import { FAKE_MCP, mcpNames, mcpSandbox } from "./mcp-helpers.js";

const server = useMockLLMServer();
type Sandbox = ReturnType<typeof mcpSandbox>;

/** The MCP tools a run offers, and the results of the calls the model makes in it. */
async function runWith(sb: Sandbox, calls: { id: string; name: string; input: Record<string, unknown> }[] = [], args: string[] = []) {
  server.reset();
  server.enqueue(...(calls.length ? [{ toolCalls: calls }] : []), { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", ...args, "go"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  return {
    stderr: r.stderr,
    tools: (lines[0]!.tools as string[]).filter((t) => t.startsWith("mcp__")),
    results: lines.filter((l) => l.kind === "tool-result").map((l) => l.result),
  };
}

const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"));

/**
 * A `keen mcp …` command in this process, through the same main() the bundle runs (test/cli/in-process.ts):
 * what the command writes and prints is Keen's decision, and each file keeps one spawned command of
 * each kind (exit 0, and a usage error's exit 2) for the process's side. Saves a Keen start each.
 */
const mcp = (sb: Sandbox, args: string[]) => inProcess(["mcp", ...args], sb.env, sb.workspace);

test("keen mcp add (stdio with -e and --, http with --header) and remove, in the user config: other keys kept, the servers run", async () => {
  const sb = mcpSandbox(server.url);
  const config = join(sb.home, "config.json");
  const http = await startHttpMcpServer();
  try {
    const add = await sb.run(["mcp", "add", "fake", "-e", "GIVEN=v1", "-e", "OTHER=a=b", "--", process.execPath, FAKE_MCP]);
    assert.deepEqual([add.code, add.stderr], [0, ""]);
    assert.equal(add.stdout, `Added stdio MCP server "fake" to ${config}: ${process.execPath} ${FAKE_MCP}\n`);
    const web = await mcp(sb, ["add", "--transport", "http", "web", http.url, "--header", "X-Test: from-keen"]);
    assert.deepEqual([web.code, web.stdout, web.stderr], [0, `Added http MCP server "web" to ${config}: ${http.url}\n`, ""]);
    const stored = readJson(config);
    assert.equal(stored.stdinGraceMs, 300, "the rest of the config is kept");
    assert.deepEqual(stored.mcpServers, {
      fake: { type: "stdio", command: process.execPath, args: [FAKE_MCP], env: { GIVEN: "v1", OTHER: "a=b" } },
      web: { type: "http", url: http.url, headers: { "X-Test": "from-keen" } },
    });
    assert.deepEqual(readdirSync(sb.home).filter((f) => f.includes("tmp")), [], "no temporary file left");

    const run = await runWith(sb, [{ id: "e", name: "mcp__fake__env", input: { name: "GIVEN" } }]);
    assert.deepEqual(run.tools, [...mcpNames("fake"), ...mcpNames("web")]);
    assert.deepEqual(run.results, ["v1"]);
    assert.ok(http.requests.every((req) => req.headers["x-test"] === "from-keen"));

    const remove = await mcp(sb, ["remove", "fake"]);
    assert.deepEqual([remove.code, remove.stdout, remove.stderr], [0, `Removed MCP server "fake" from ${config}\n`, ""]);
    assert.deepEqual(Object.keys(readJson(config).mcpServers), ["web"]);
    assert.equal(readJson(config).stdinGraceMs, 300);
  } finally {
    await http.close();
  }
});

// The writes, messages and trust decisions of --scope project, step by step: test/cli/mcp-commands.test.ts.
test("keen mcp add --scope project writes .mcp.json; once trusted, a run offers its servers' tools", async () => {
  const sb = mcpSandbox(server.url);
  const file = join(sb.workspace, ".mcp.json");
  const first = await mcp(sb, ["add", "--scope", "project", "one", "--", process.execPath, FAKE_MCP]);
  assert.deepEqual([first.code, first.stdout], [0, `Added stdio MCP server "one" to ${file}: ${process.execPath} ${FAKE_MCP}\n`], first.stderr);
  assert.equal(first.stderr, "keen: this workspace's .mcp.json is not trusted: its servers start once you run `keen mcp trust`\n");
  assert.deepEqual(readJson(file), { mcpServers: { one: { type: "stdio", command: process.execPath, args: [FAKE_MCP], env: {} } } });
  assert.equal((await mcp(sb, ["trust"])).code, 0);
  assert.deepEqual((await runWith(sb)).tools, mcpNames("one"));
});

test("a .mcp.json written by `claude mcp add --scope project` (stdio with env, http with headers) works unchanged", async () => {
  const sb = mcpSandbox(server.url);
  const http = await startHttpMcpServer();
  try {
    // Written by Claude Code 2.1.197; only the server's path and the URL are this machine's.
    const fixture = readFileSync(resolve(import.meta.dirname, "../fixtures/claude-mcp-json/mcp.json"), "utf8");
    writeFileSync(join(sb.workspace, ".mcp.json"), fixture.replace("/FAKE/mcp-server.mjs", FAKE_MCP).replace("http://127.0.0.1:9/mcp", http.url));
    assert.equal((await mcp(sb, ["trust"])).code, 0);
    const run = await runWith(sb, [{ id: "e", name: "mcp__fake__env", input: { name: "FAKE_VALUE" } }, { id: "w", name: "mcp__web__echo", input: { text: "hi" } }]);
    assert.equal(run.stderr, "");
    assert.deepEqual(run.tools, [...mcpNames("fake"), ...mcpNames("web")]);
    // Env values are secrets: the model sees the value redacted, and the server had it.
    assert.deepEqual(run.results, ["[redacted]", "echo: hi"]);
    assert.ok(http.requests.length > 0 && http.requests.every((req) => req.headers["x-test"] === "from-claude-header"));
    // In this process too: it starts both servers from here, and stops them before it returns.
    const list = await mcp(sb, ["list", "--json"]);
    assert.deepEqual(JSON.parse(list.stdout).map((s: any) => [s.name, s.transport, s.status]), [["fake", "stdio", "connected"], ["web", "http", "connected"]]);
  } finally {
    await http.close();
  }
});

// --mcp-config inline and from a file, and its bad input (bad inline JSON, a server without command
// or url, a missing or invalid file): in process (test/cli/mcp-run.test.ts, test/cli/mcp-commands.test.ts);
// a spawned run with --mcp-config is test/e2e/mcp-config.test.ts's.
// The table of bad input (each message) runs in-process: test/cli/mcp-commands.test.ts.
test("bad input to keen mcp add: one line on stderr, nothing on stdout, exit 2, the config untouched", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { have: { command: "x" } } });
  const config = join(sb.home, "config.json");
  const before = readFileSync(config, "utf8");
  const r = await sb.run(["mcp", "add", "have", "--", "x"]);
  assert.deepEqual([r.code, r.stdout, r.stderr], [2, "", `keen: server "have" is already in ${config}; keen mcp remove have --scope user first\n`]);
  assert.equal(readFileSync(config, "utf8"), before);
});
