import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeSandbox } from "./harness.js";
import { FAKE_MCP } from "./mcp-helpers.js";
import { startMockLLMServer } from "../fakes/mock-llm-server.js";
import { makeTempDir } from "../temp.js";

/** Resolves once `check` holds; the connection arrives asynchronously, so poll the event loop. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10));
}

test("the provider's connection is open while an MCP server starts, and the first request goes over it", { timeout: 60_000 }, async () => {
  const server = await startMockLLMServer();
  try {
    // An MCP server that starts only when the test says: set-up waits for it, which is when the handshake must already run.
    const gate = join(makeTempDir("keen-gate-"), "open");
    const script = `while [ ! -e "$GATE" ]; do sleep 0.05; done; exec "${process.execPath}" "${FAKE_MCP}"`;
    const sb = makeSandbox(server.url, { mcpServers: { gated: { command: "sh", args: ["-c", script], env: { GATE: gate }, connectTimeoutMs: 300_000 } } });
    server.enqueue({ text: "hello back" });
    const run = sb.run(["run", "hello"]);
    await until(() => server.connections() > 0 || server.requests.length > 0);
    assert.equal(server.requests.length, 0, "connected before the request: set-up is still waiting for the MCP server");
    writeFileSync(gate, "");
    const r = await run;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), "hello back");
    assert.equal(server.requests.length, 1);
    assert.equal(server.connections(), 1, "the request used the early connection");
  } finally {
    await server.close();
  }
});

test("nothing connects when no request will be made: replay, usage errors, an empty prompt, --version, sessions", async () => {
  const server = await startMockLLMServer();
  try {
    const sb = makeSandbox(server.url);
    const replay = await sb.run(["run", "--replay", "demo", "--headless", "--replay-speed", "0"]);
    assert.equal(replay.code, 0, replay.stderr);
    const usage = await sb.run(["run", "--allowed-tools", "no_such_tool", "hello"]);
    assert.equal(usage.code, 2, usage.stderr);
    // The prompt on stdin alone turns out empty: the connection waited for it.
    const empty = await sb.run(["run"], { stdin: "  \n" });
    assert.equal(empty.code, 2, empty.stderr);
    assert.match(empty.stderr, /empty prompt/);
    assert.equal((await sb.run(["--version"])).code, 0);
    assert.equal((await sb.run(["sessions", "list"])).code, 0);
    assert.equal(server.connections(), 0);
    assert.equal(server.requests.length, 0);
  } finally {
    await server.close();
  }
});

test("KEEN_TRACE_STARTUP=1 traces start-up on stderr in the order things happen; stdout stays the product's", { timeout: 60_000 }, async () => {
  const server = await startMockLLMServer();
  try {
    const sb = makeSandbox(server.url);
    server.enqueue({ deltas: ["one ", "two"] });
    const r = await sb.run(["run", "--headless", "--stream-deltas", "hello"], { env: { KEEN_TRACE_STARTUP: "1" } });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stdout.includes("keen-trace"));
    const events = r.stderr.split("\n").filter((l) => l.startsWith("keen-trace ")).map((l) => l.replace(/^keen-trace \d+\.\d /, ""));
    const expected = [
      "run: command parsed", "setup start", "preconnect: socket opened", "setup preconnect", "setup sandbox", "setup tools", "setup mcp",
      "setup provider", "run: prompt sent to the engine", "request: asks for the early socket", "request: takes the early socket",
      "request: headers sent", "request: response headers", "run: first delta written",
    ];
    // These land wherever the loop got control (the client is built on a later turn, beside the store's I/O): only their presence is asserted.
    const floating = ["preconnect: tcp connected", "provider: client built (the SDK loaded)"];
    // zod loads only where something needs it: here the first check of this sandbox's config (test/build/startup-path.test.ts).
    assert.deepEqual(events.filter((e) => !floating.includes(e) && e !== "zod loaded"), expected);
    for (const event of floating) assert.ok(events.includes(event), events.join("\n"));
    const quiet = await sb.run(["run", "hello"]);
    assert.ok(!quiet.stderr.includes("keen-trace"), "off unless asked for");
  } finally {
    await server.close();
  }
});
