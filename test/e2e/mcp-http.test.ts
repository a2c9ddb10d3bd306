/**
 * MCP over HTTP: Streamable HTTP with configured headers (secrets: never in
 * any output), the fallback to legacy SSE for a server that only speaks that,
 * and `type: "sse"` directly. The fake server runs in this test process.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { startHttpMcpServer } from "../fakes/mcp-http-server.mjs";
import { parseLines } from "./harness.js";
import { mcpNames, mcpSandbox } from "./mcp-helpers.js";

const server = useMockLLMServer();

async function echoThrough(config: Record<string, unknown>, env: Record<string, string> = {}) {
  const sb = mcpSandbox(server.url, { mcpServers: { web: config } });
  server.enqueue({ toolCalls: [{ id: "e", name: "mcp__web__echo", input: { text: "over http" } }] }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  const lines = parseLines(r.stdout);
  assert.deepEqual(lines[0]!.tools.filter((t: string) => t.startsWith("mcp__")), mcpNames("web"));
  assert.deepEqual(lines.filter((l) => l.kind === "tool-result").map((l) => [l.is_error, l.result]), [[false, "echo: over http"]]);
  return { r, lines };
}

test("Streamable HTTP with headers from ${VAR}: the server gets them, no output shows them", async () => {
  const mcp = await startHttpMcpServer();
  try {
    const { r } = await echoThrough({ type: "http", url: mcp.url, headers: { Authorization: "Bearer ${WEB_MCP_AUTH}" } }, { WEB_MCP_AUTH: "abc-def-ghi-123" });
    assert.ok(mcp.requests.length > 0);
    assert.deepEqual([...new Set(mcp.requests.map((req) => req.headers.authorization))], ["Bearer abc-def-ghi-123"], "every request carries the header");
    assert.doesNotMatch(r.stdout + r.stderr + JSON.stringify(server.requests), /abc-def-ghi-123/);
  } finally {
    await mcp.close();
  }
});

test("a server that only speaks the legacy SSE transport: type http falls back to it; type sse goes there directly", async () => {
  const mcp = await startHttpMcpServer({ legacySse: true });
  try {
    await echoThrough({ type: "http", url: mcp.url });
    assert.deepEqual(mcp.requests[0]!.method, "POST", "Streamable HTTP first");
    assert.ok(mcp.requests.some((req) => req.method === "GET" && req.url === "/mcp"), "then the SSE stream");
    mcp.requests.length = 0;
    await echoThrough({ type: "sse", url: mcp.url });
    assert.deepEqual(mcp.requests[0]!.method, "GET");
  } finally {
    await mcp.close();
  }
});
