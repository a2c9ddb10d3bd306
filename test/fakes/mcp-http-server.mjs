/**
 * The fake MCP server's tools (test/fakes/mcp-tools.mjs) over HTTP, in the
 * test's own process: `await startHttpMcpServer({ legacySse })` serves them
 * over Streamable HTTP (or, with legacySse, only the old SSE transport) and
 * resolves to `{ url, requests, close }`.
 */
import http from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { createFakeServer } from "./mcp-tools.mjs";

/** Serves the tools over HTTP on 127.0.0.1 (a free port). */
export async function startHttpMcpServer({ legacySse = false } = {}) {
  const requests = [];
  const sse = new Map();
  const httpServer = http.createServer(async (req, res) => {
    requests.push({ method: req.method, url: req.url, headers: req.headers });
    const url = new URL(req.url, "http://localhost");
    if (legacySse) {
      if (req.method === "GET" && url.pathname === "/mcp") {
        const transport = new SSEServerTransport("/messages", res);
        sse.set(transport.sessionId, transport);
        res.on("close", () => sse.delete(transport.sessionId));
        await createFakeServer().connect(transport);
        return;
      }
      if (req.method === "POST" && url.pathname === "/messages") {
        const transport = sse.get(url.searchParams.get("sessionId"));
        if (!transport) return void res.writeHead(404).end();
        return void (await transport.handlePostMessage(req, res));
      }
      return void res.writeHead(405).end();
    }
    if (url.pathname !== "/mcp") return void res.writeHead(404).end();
    // Stateless: a server and transport per request.
    const server = createFakeServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  const { port } = httpServer.address();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    close: () => new Promise((resolve) => {
      httpServer.closeAllConnections();
      httpServer.close(() => resolve());
    }),
  };
}
