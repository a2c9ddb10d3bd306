import { resolve } from "node:path";
import { makeSandbox } from "./harness.js";

/** The fake MCP server (test/fakes/mcp-server.mjs) as a stdio server config; `mode` is one of its modes. */
export const FAKE_MCP = resolve(import.meta.dirname, "../fakes/mcp-server.mjs");
export function fakeServer(mode?: string, extra: Record<string, unknown> = {}) {
  return { command: process.execPath, args: mode ? [FAKE_MCP, mode] : [FAKE_MCP], ...extra };
}

/** The names the fake server's tools have for the model. */
export const FAKE_TOOLS = ["echo", "slow", "fail", "image", "structured", "add_tool", "env", "die", "spawn_child"];
export const BUILTIN_TOOLS = ["bash", "read_file", "write_file", "edit_file", "grep", "glob", "list", "todo_write", "skill", "task", "web_fetch", "job_output", "job_kill"];
export const mcpNames = (server: string, tools = FAKE_TOOLS) => tools.map((t) => `mcp__${server}__${t}`);

/** Whether a process is alive (signal 0). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A stream line without what differs between runs (conversation id, timestamps, sequence, a tool's duration). */
export const strip = (line: Record<string, any>) => {
  const { conversation_id: _c, ts: _t, seq: _s, duration_ms: _d, ...rest } = line;
  return rest;
};

/**
 * `makeSandbox` with `sandbox.mode: "off"` in the user config (a later `config` may set it again).
 * The sandbox confines bash, and these tests never run bash: a stdio MCP server runs unconfined
 * unless its config says `"sandbox": true` (test/e2e/mcp-sandbox.test.ts runs one inside). With the
 * sandbox on, every turn would still warm it in the background (~0.25 s of CPU a turn) for nothing.
 */
export const mcpSandbox = (serverUrl: string, config: Record<string, unknown> = {}) => makeSandbox(serverUrl, { sandbox: { mode: "off" }, ...config });
