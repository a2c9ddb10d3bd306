import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PERMISSION_MODES } from "../../protocol/commands.js";
import { sandboxSupport } from "../../app/sandbox/deps.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox } from "./harness.js";
import { fakeServer } from "./mcp-helpers.js";
import { modeCell, TOOL_COLUMNS } from "./protocol-tables.js";
import { startStdio } from "./stdio-client.js";

/*
 * docs/PROTOCOL.md's permission table is generated from the permission gate
 * (protocol-doc.test.ts); this checks every cell of it against a running
 * `keen stdio`: one call of each kind of tool per mode, with bash sandboxed
 * and not.
 */
const server = useMockLLMServer();
const support = sandboxSupport();

/** One call per tool a column names (MCP: the fake server's `echo` declares readOnlyHint, `env` does not). */
const CALLS = [
  { id: "read_file", name: "read_file", input: { path: "notes.txt" }, column: 0 },
  { id: "mcp_read", name: "mcp__fake__echo", input: { text: "x" }, column: 0 },
  { id: "write_file", name: "write_file", input: { path: "out.txt", content: "out\n" }, column: 1 },
  { id: "bash", name: "bash", input: { command: "echo ran" }, column: 2 },
  { id: "mcp_other", name: "mcp__fake__env", input: { name: "HOME" }, column: 3 },
];

async function observe(sandbox: "on" | "off") {
  const sb = makeSandbox(server.url, { mcpServers: { fake: fakeServer() } });
  writeFileSync(join(sb.workspace, "notes.txt"), "notes\n");
  const client = startStdio(["--model", "anthropic/claude-test", "--sandbox", sandbox], sb.env, sb.workspace, 120_000);
  const seen: Record<string, Record<string, string>> = {};
  for (const mode of PERMISSION_MODES) {
    server.enqueue({ toolCalls: CALLS.map(({ id, name, input }) => ({ id: `${mode}-${id}`, name, input })) }, { text: "done" });
    client.send({ kind: "set-permission-mode", id: `m-${mode}`, mode });
    client.send({ kind: "prompt", id: `p-${mode}`, text: `try every tool in ${mode}` });
    const asked = new Set<string>();
    for (;;) {
      const line = await client.next((l) => l.kind === "permission-request" || (l.kind === "response" && l.id === `p-${mode}`));
      if (line.kind === "response") break;
      asked.add(line.tool_call_id);
      client.send({ kind: "permission-response", request_id: line.request_id, decision: "deny" });
    }
    assert.equal((await client.response(`m-${mode}`)).ok, true);
    const results = new Map(client.lines.filter((l) => l.kind === "tool-result").map((l) => [l.tool_call_id, l]));
    seen[mode] = Object.fromEntries(CALLS.map(({ id }) => {
      const call = `${mode}-${id}`;
      return [id, asked.has(call) ? "ask" : results.get(call)!.is_error ? "refused" : "run"];
    }));
  }
  const { code, stderr } = await client.end();
  assert.equal(code, 0, stderr);
  return { seen, sandboxed: client.lines.find((l) => l.kind === "session-start")!.sandboxed as boolean };
}

function expected(confined: boolean) {
  return Object.fromEntries(PERMISSION_MODES.map((mode) => [mode, Object.fromEntries(CALLS.map(({ id, column }) => [id, modeCell(mode, TOOL_COLUMNS[column]!, confined)]))]));
}

test("the permission table: every mode, bash unconfined (--sandbox off)", async () => {
  const { seen, sandboxed } = await observe("off");
  assert.equal(sandboxed, false);
  assert.deepEqual(seen, expected(false));
});

test("the permission table: every mode, bash in the sandbox (--sandbox on)", { skip: support.ok ? false : `no sandbox here: ${support.missing}` }, async () => {
  const { seen, sandboxed } = await observe("on");
  assert.equal(sandboxed, true);
  assert.deepEqual(seen, expected(true));
});
