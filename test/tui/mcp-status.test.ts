import { test } from "node:test";
import assert from "node:assert/strict";
import { loadTheme } from "../../themes/index.js";
import { statusBar } from "../../app/tui/views/status-bar.js";
import { plain, viewOf } from "./helpers.js";

const theme = loadTheme("dark", {});

test("the TUI shows MCP servers: a count in the status bar, a notice for each one that failed or waits for trust", () => {
  const view = viewOf([
    { kind: "mcp-server", server: "fake", status: "connected", tools: ["mcp__fake__echo"] },
    { kind: "mcp-server", server: "proj", status: "untrusted", tools: [], message: "project server \"proj\" not started: run `keen mcp trust`" },
    { kind: "mcp-server", server: "fake", status: "tools-changed", tools: [] },
    { kind: "mcp-server", server: "", status: "warning", tools: [], message: "no MCP server offers a tool named \"mcp__x__y\"" },
  ]);
  assert.deepEqual(plain([statusBar(view, 120, theme, 0)]), [" idle  anthropic/claude-test | mode: ask | mcp 1/2 | /work/proj"]);
  assert.deepEqual(view.items.map((i) => (i.type === "notice" ? [i.level, i.text] : i.type)), [
    ["warning", "MCP: project server \"proj\" not started: run `keen mcp trust`"],
    ["warning", "MCP: no MCP server offers a tool named \"mcp__x__y\""],
  ]);
  const gone = viewOf([
    { kind: "mcp-server", server: "fake", status: "connected", tools: [] },
    { kind: "mcp-server", server: "fake", status: "disconnected", tools: [], message: "server \"fake\" disconnected" },
    { kind: "local-clear" },
  ]);
  assert.deepEqual(plain([statusBar(gone, 120, theme, 0)]), [" idle  anthropic/claude-test | mode: ask | mcp 0/1 | /work/proj"]);
});

test("the TUI shows a hook that blocked or failed as a notice; one that passed stays quiet", () => {
  const hook = { kind: "hook", hook_event: "PreToolUse", matcher: "Bash", command: "guard.sh", source: "user", duration_ms: 5, tool_name: "bash" } as const;
  const view = viewOf([
    { ...hook, outcome: "ok" },
    { ...hook, outcome: "blocked", decision: "block", message: "rm is not allowed" },
    { ...hook, hook_event: "Stop", tool_name: undefined, outcome: "timeout", message: "killed after 1s (its timeout)" },
  ]);
  assert.deepEqual(view.items.map((i) => (i.type === "notice" ? [i.level, i.text] : i.type)), [
    ["info", "hook PreToolUse (bash) blocked: rm is not allowed"],
    ["warning", "hook Stop timeout: killed after 1s (its timeout)"],
  ]);
});
