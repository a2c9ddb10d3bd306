#!/usr/bin/env node
/**
 * THE fake MCP server for Keen's tests, as a stdio program (its tools: test/fakes/mcp-tools.mjs;
 * the same over HTTP, in-process: test/fakes/mcp-http-server.mjs).
 *
 * `node test/fakes/mcp-server.mjs [mode]` where mode is
 *   (none)          serve the tools
 *   --hang          never answer (a server stuck at connect; appends "pid <pid>" to $MCP_FAKE_MARKS)
 *   --exit-at-start write "boom" to stderr and exit 3 before answering
 *   --once <file>   serve the first time (creating <file>), exit at start when it exists
 *   --stress        serve the tools plus the stress tools (see createStressTools)
 * The e2e tests run it bundled into one file (test/e2e/mcp-helpers.ts): it starts for nearly
 * every MCP test, and loading the SDK from its many small modules cost more than the rest.
 */
import { appendFileSync, existsSync, writeFileSync } from "node:fs";

const mode = process.argv[2];
if (mode === "--exit-at-start") {
  process.stderr.write("boom\n");
  process.exit(3);
} else if (mode === "--once" && existsSync(process.argv[3])) {
  process.stderr.write("not again\n");
  process.exit(4);
} else if (mode === "--hang") {
  if (process.env.MCP_FAKE_MARKS) appendFileSync(process.env.MCP_FAKE_MARKS, `pid ${process.pid}\n`);
  process.stdin.resume();
  // Stuck for real: not even its stdin closing ends it.
  setInterval(() => {}, 1 << 30);
} else {
  if (mode === "--once") writeFileSync(process.argv[3], "started\n");
  // Loaded only to serve: the modes above start and fail (or hang) without running the SDK's modules.
  const [{ StdioServerTransport }, { createFakeServer, createStressTools }] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/stdio.js"), import("./mcp-tools.mjs"),
  ]);
  const server = createFakeServer();
  const counts = { list: 0 };
  if (mode === "--stress") createStressTools(server, counts);
  const transport = new StdioServerTransport();
  await server.connect(transport);
  const received = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message.method === "tools/list") counts.list++;
    received(message, extra);
  };
}
