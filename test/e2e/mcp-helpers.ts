import { join, resolve } from "node:path";
import { buildSync } from "esbuild";
import { makeTempDir } from "../temp.js";
import { makeSandbox } from "./harness.js";

/**
 * The fake MCP server (test/fakes/mcp-server.mjs), bundled once per test process into one file
 * of the same name (esbuild, as test/e2e/store-multi-process.test.ts bundles its worker): nearly
 * every MCP test starts it, and from the SDK's and zod's many small modules each start cost
 * ~0.5 s of CPU, bundled ~0.3 s. ESM for the program's top-level await; the SDK's CommonJS
 * dependencies get a `require`.
 */
export const FAKE_MCP = join(makeTempDir("keen-fake-mcp-"), "mcp-server.mjs");
buildSync({
  entryPoints: [resolve(import.meta.dirname, "../fakes/mcp-server.mjs")], outfile: FAKE_MCP,
  bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "error",
  banner: { js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);' },
});

/** The fake MCP server as a stdio server config; `mode` is one of its modes. */
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
