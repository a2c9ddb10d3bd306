import { after, test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
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
const server = useMockLLMServer();
const open: TmuxKeen[] = [];
after(() => open.forEach((t) => t.kill()));

test("the TUI shows MCP status when it opens: the server count, an untrusted .mcp.json and how to trust it", { skip }, async () => {
  const sb = makeSandbox(server.url, { mcpServers: { fake: fakeServer() } });
  writeFileSync(join(sb.workspace, ".mcp.json"), JSON.stringify({ mcpServers: { proj: fakeServer() } }));
  const t = new TmuxKeen(["--model", "anthropic/claude-test"], sb.env, sb.workspace, { cols: 160, rows: 30 });
  open.push(t);
  const screen = await t.waitFor(/mcp 1\/2/);
  assert.match(screen, /MCP: project server "proj" \(.*\.mcp\.json\) not started: run `keen mcp trust`/);
  t.keys(["C-d"]);
  await t.waitFor("[exit 0]");
});
