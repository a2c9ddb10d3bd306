/**
 * The tools of THE fake MCP server for Keen's tests, written with the SDK's
 * server side; test/fakes/mcp-server.mjs serves them over stdio (a program),
 * test/fakes/mcp-http-server.mjs over HTTP in the test's own process. Apart,
 * so the program loads no HTTP transport: it starts for nearly every MCP test.
 *
 * Tools: echo {text} (read-only), slow {ms} (notices cancellation: appends
 * "cancelled <ms>" to $MCP_FAKE_MARKS), fail (isError), image (text + PNG),
 * structured (structuredContent), add_tool (adds `added`, list_changed),
 * env {name} (a variable of the server's environment), die (exits mid-call),
 * spawn_child (starts `sleep 300` in the server's process group, returns its pid).
 */
import { appendFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
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

