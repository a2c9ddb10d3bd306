/**
 * Issue 18, item 5: an MCP stdio server with `"sandbox": true` runs inside the
 * session's sandbox, under bash's policy; its neighbours without the flag do not.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { sandboxSupport } from "../../app/sandbox/deps.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";
import { fakeServer } from "./mcp-helpers.js";

const support = sandboxSupport();
const skip = support.ok ? false : `no sandbox on this machine: ${support.missing} (${support.install})`;
if (skip) process.stderr.write(`mcp-sandbox.test.ts: skipped: ${skip}\n`);

const server = useMockLLMServer();

test("a sandbox: true server runs confined (the sandbox runtime's marker is in its environment); an unflagged one does not", { skip }, async () => {
  const sb = makeSandbox(server.url, { mcpServers: { boxed: fakeServer(undefined, { sandbox: true }), plain: fakeServer() } });
  server.enqueue({
    toolCalls: [
      { id: "b", name: "mcp__boxed__env", input: { name: "SANDBOX_RUNTIME" } },
      { id: "p", name: "mcp__plain__env", input: { name: "SANDBOX_RUNTIME" } },
    ],
  }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "--sandbox", "on", "go"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  const tools: string[] = lines[0]!.tools;
  assert.ok(tools.includes("mcp__boxed__env") && tools.includes("mcp__plain__env"), tools.join(", "));
  const results = Object.fromEntries(lines.filter((l) => l.kind === "tool-result").map((l) => [l.tool_call_id, l.result]));
  assert.deepEqual(results, { b: "1", p: "(unset)" });
});
