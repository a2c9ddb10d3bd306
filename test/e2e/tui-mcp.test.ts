import { after, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox } from "./harness.js";
import { fakeServer } from "./mcp-helpers.js";
import { TMUX_MISSING, TmuxKeen } from "./tmux.js";

/*
 * The TUI with MCP servers in a real terminal (tmux): what the servers did at
 * start shows when it opens, before any prompt. Skipped without tmux.
 */
const skip = TMUX_MISSING ?? false;
// Each screen here waits on Keen's start, its MCP servers' or its exit: a loaded machine takes longer than the default 10 s.
const WAIT_MS = 30_000;
const server = useMockLLMServer();
const open: TmuxKeen[] = [];
after(() => open.forEach((t) => t.kill()));

test("the TUI asks once about an untrusted .mcp.json; no: the status says how to trust it, and it is not asked again", { skip }, async () => {
  const sb = makeSandbox(server.url, { mcpServers: { fake: fakeServer() } });
  writeFileSync(join(sb.workspace, ".mcp.json"), JSON.stringify({ mcpServers: { proj: fakeServer() } }));
  const t = new TmuxKeen(["--model", "anthropic/claude-test"], sb.env, sb.workspace, { cols: 160, rows: 30 });
  open.push(t);
  const question = await t.waitFor("Trust them for this workspace?", WAIT_MS);
  assert.match(question, /would start these MCP servers/);
  assert.match(question, /proj: .*mcp-server\.mjs/);
  t.keys(["n", "Enter"]);
  const screen = await t.waitFor(/mcp 1\/2/, WAIT_MS);
  // The transcript's lines joined: a long temp path wraps the notice.
  const transcript = screen.split("\n").map((row) => row.replace(/^│/, "").replace(/│.*$/, "").trimEnd()).join(" ");
  assert.match(transcript, /MCP: project server "proj" \(.*\.mcp\.json\) not started: +run `keen mcp trust`/);
  t.keys(["C-d"]);
  await t.waitFor("[exit 0]", WAIT_MS);

  // Asked once: the same file opens without the question.
  const again = new TmuxKeen(["--model", "anthropic/claude-test"], sb.env, sb.workspace, { cols: 160, rows: 30 });
  open.push(again);
  const second = await again.waitFor(/mcp 1\/2/, WAIT_MS);
  assert.doesNotMatch(second, /Trust them/);
  again.keys(["C-d"]);
  await again.waitFor("[exit 0]", WAIT_MS);
});

test("yes to the TUI's question trusts that content of .mcp.json: its servers start, and a changed file is asked about again", { skip }, async () => {
  const sb = makeSandbox(server.url);
  const file = join(sb.workspace, ".mcp.json");
  writeFileSync(file, JSON.stringify({ mcpServers: { proj: fakeServer() } }));
  const t = new TmuxKeen(["--model", "anthropic/claude-test"], sb.env, sb.workspace, { cols: 160, rows: 30 });
  open.push(t);
  await t.waitFor("Trust them for this workspace?", WAIT_MS);
  t.keys(["y", "Enter"]);
  await t.waitFor(/mcp 1\/1/, WAIT_MS);
  t.keys(["C-d"]);
  await t.waitFor("[exit 0]", WAIT_MS);
  const trusted = JSON.parse(readFileSync(join(sb.home, "config.json"), "utf8")).mcpTrust[sb.workspace];
  assert.equal(typeof trusted.sha256, "string");
  assert.equal(trusted.declined, undefined);

  writeFileSync(file, JSON.stringify({ mcpServers: { proj: fakeServer(), other: fakeServer() } }));
  const changed = new TmuxKeen(["--model", "anthropic/claude-test"], sb.env, sb.workspace, { cols: 160, rows: 30 });
  open.push(changed);
  const asked = await changed.waitFor("Trust them for this workspace?", WAIT_MS);
  assert.match(asked, /other: /);
  changed.keys(["C-c"]);
  await changed.waitFor("[exit", WAIT_MS);
});
