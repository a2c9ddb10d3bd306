#!/usr/bin/env node
/**
 * THE fake MCP server for Keen's tests, written with the SDK's server side.
 *
 * As a program (stdio): `node test/fakes/mcp-server.mjs [mode]` where mode is
 *   (none)          serve the tools below
 *   --hang          never answer (a server stuck at connect; appends "pid <pid>" to $MCP_FAKE_MARKS)
 *   --exit-at-start write "boom" to stderr and exit 3 before answering
 *   --once <file>   serve the first time (creating <file>), exit at start when it exists
 *   --stress        serve the tools below plus the stress tools (see createStressTools)
 * In-process (HTTP): `await startHttpMcpServer({ legacySse })` serves the same
 * tools over Streamable HTTP (or, with legacySse, only the old SSE transport)
 * and resolves to `{ url, requests, close }`.
 *
 * Tools: echo {text} (read-only), slow {ms} (notices cancellation: appends
 * "cancelled <ms>" to $MCP_FAKE_MARKS), fail (isError), image (text + PNG),
 * structured (structuredContent), add_tool (adds `added`, list_changed),
 * env {name} (a variable of the server's environment), die (exits mid-call),
 * spawn_child (starts `sleep 300` in the server's process group, returns its pid).
 */
import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import http from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import * as z from "zod";

/** One 1×1 PNG. */
export const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

export function createFakeServer() {
  const server = new McpServer({ name: "fake", version: "1.0.0" });
  const text = (t) => ({ content: [{ type: "text", text: t }] });
  server.registerTool("echo", {
    description: "Echo the text back", inputSchema: { text: z.string() }, annotations: { readOnlyHint: true },
  }, async ({ text: t }) => text(`echo: ${t}`));
  server.registerTool("slow", { description: "Sleep for ms milliseconds", inputSchema: { ms: z.number() } }, async ({ ms }, extra) => {
    await new Promise((resolve) => {
      const cancelled = () => {
        clearTimeout(timer);
        if (process.env.MCP_FAKE_MARKS) appendFileSync(process.env.MCP_FAKE_MARKS, `cancelled ${ms}\n`);
        resolve();
      };
      const timer = setTimeout(resolve, ms);
      // The cancellation can arrive in the same read as the request: then the handler starts already aborted.
      if (extra.signal.aborted) cancelled();
      else extra.signal.addEventListener("abort", cancelled);
    });
    return text(`slept ${ms}`);
  });
  server.registerTool("fail", { description: "Always fails" }, async () => ({ isError: true, content: [{ type: "text", text: "it failed on purpose" }] }));
  server.registerTool("image", { description: "Returns an image" }, async () => ({
    content: [{ type: "text", text: "a picture:" }, { type: "image", data: PNG_BASE64, mimeType: "image/png" }],
  }));
  server.registerTool("structured", { description: "Structured answer", outputSchema: { answer: z.number() } }, async () => ({
    content: [], structuredContent: { answer: 42 },
  }));
  server.registerTool("add_tool", { description: "Adds the tool `added`" }, async () => {
    server.registerTool("added", { description: "A tool added at run time", annotations: { readOnlyHint: true } }, async () => text("added works"));
    return text("added a tool");
  });
  server.registerTool("env", { description: "A variable of the server's environment", inputSchema: { name: z.string() } }, async ({ name }) =>
    text(process.env[name] ?? "(unset)"));
  server.registerTool("die", { description: "Exits mid-call" }, async () => {
    process.exit(1);
  });
  server.registerTool("spawn_child", { description: "Starts a long sleep in the server's process group" }, async () => {
    const child = spawn("sleep", ["300"], { stdio: "ignore" });
    return text(String(child.pid));
  });
  return server;
}

/**
 * Tools that misbehave on purpose, for the transport's limits: big {bytes}
 * (a text result of that many characters), stream {fast_bytes} (starts a
 * result, sends fast_bytes bytes of it as fast as the pipe takes them, appends
 * "sent <n>" to $MCP_FAKE_MARKS, then trickles 64 KiB every 50 ms forever:
 * never a newline), stderr {text} (writes text to stderr), flood {count, add}
 * (sends count tools/list_changed notifications, count 0: forever, in the
 * background; with add, registers `added` halfway), stats (how many
 * tools/list requests the server has answered).
 */
export function createStressTools(server, counts) {
  const text = (t) => ({ content: [{ type: "text", text: t }] });
  server.registerTool("big", { description: "A text result of `bytes` characters", inputSchema: { bytes: z.number() } }, async ({ bytes }) =>
    text("x".repeat(bytes)));
  server.registerTool("stream", { description: "A result that never ends", inputSchema: { fast_bytes: z.number() } }, async ({ fast_bytes }, extra) => {
    const write = (data) => (process.stdout.write(data) ? undefined : new Promise((resolve) => process.stdout.once("drain", resolve)));
    await write(`{"jsonrpc":"2.0","id":${JSON.stringify(extra.requestId)},"result":{"content":[{"type":"text","text":"`);
    const chunk = Buffer.alloc(65536, "x");
    let sent = 0;
    while (sent < fast_bytes) {
      await write(chunk);
      sent += chunk.length;
    }
    if (process.env.MCP_FAKE_MARKS) appendFileSync(process.env.MCP_FAKE_MARKS, `sent ${sent}\n`);
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await write(chunk);
    }
  });
  server.registerTool("stderr", { description: "Writes text to stderr", inputSchema: { text: z.string() } }, async ({ text: t }) => {
    process.stderr.write(t);
    return text("written");
  });
  server.registerTool("flood", { description: "Sends list_changed notifications", inputSchema: { count: z.number(), add: z.boolean().optional() } }, async ({ count, add }) => {
    const one = async (i) => {
      if (add && i === Math.floor(count / 2)) server.registerTool("added", { description: "Added during a flood" }, async () => text("added works"));
      await server.server.sendToolListChanged();
      // Let the server read its stdin now and then: a flood must not stop it answering.
      if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
    };
    if (count === 0) {
      void (async () => {
        for (let i = 0; ; i++) await one(i);
      })();
      return text("flooding");
    }
    for (let i = 0; i < count; i++) await one(i);
    return text(`sent ${count}`);
  });
  server.registerTool("stats", { description: "Requests served" }, async () => text(`tools/list requests: ${counts.list}`));
}

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

if (import.meta.url === `file://${process.argv[1]}`) {
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
}
