/**
 * MCP servers that fail: at start, by hanging at connect, by dying mid-session,
 * by being slow (interrupt, per-call timeout); and the process group that
 * goes with a stdio server. None of them fails or stalls the run.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { parseLines, waitForStdout } from "./harness.js";
import { alive, fakeServer, mcpNames, strip, mcpSandbox } from "./mcp-helpers.js";

const server = useMockLLMServer();


test("a server that fails to start, one that is not found and one that hangs at connect: reported, and the run goes on with the others", async () => {
  const sb = mcpSandbox(server.url, {
    mcpServers: {
      broken: fakeServer("--exit-at-start"),
      missing: { command: "keen-no-such-mcp-server" },
      stuck: fakeServer("--hang", { connectTimeoutMs: 1000 }),
      fake: fakeServer(),
    },
  });
  server.enqueue({ toolCalls: [{ id: "e", name: "mcp__fake__echo", input: { text: "still here" } }] }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  const log = (name: string) => join(sb.home, "mcp-logs", `${name}.log`);
  const notices = lines.filter((l) => l.kind === "mcp-server").map(strip).sort((a, b) => a.server.localeCompare(b.server));
  assert.equal(notices.length, 4);
  assert.deepEqual(notices[0], {
    kind: "mcp-server", server: "broken", status: "failed", tools: [],
    message: `server "broken" failed to start: the server exited (code 3) before it was ready (log: ${log("broken")})`,
  });
  assert.deepEqual(notices[1], { kind: "mcp-server", server: "fake", status: "connected", tools: mcpNames("fake") });
  assert.deepEqual(notices[2], {
    kind: "mcp-server", server: "missing", status: "failed", tools: [],
    message: `server "missing" failed to start: command not found: keen-no-such-mcp-server (log: ${log("missing")})`,
  });
  assert.deepEqual(notices[3], {
    kind: "mcp-server", server: "stuck", status: "failed", tools: [],
    message: `server "stuck" failed to start: did not connect within 1 s (connectTimeoutMs) (log: ${log("stuck")})`,
  });
  assert.equal(readFileSync(log("broken"), "utf8"), "boom\n", "the server's stderr is in its log, not on Keen's");
  assert.deepEqual(r.stderr.split("\n").filter(Boolean).sort(), notices.filter((n) => n.message).map((n) => `keen: mcp: ${n.message}`).sort());
  assert.deepEqual(lines[0]!.tools.filter((t: string) => t.startsWith("mcp__")), mcpNames("fake"));
  assert.equal(lines.find((l) => l.kind === "tool-result")!.result, "echo: still here");
  assert.equal(lines.at(-1)!.status, "success");
});

test("a server that dies mid-session: that call fails, the next call reconnects once; when the restart fails, only its calls fail", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: fakeServer() } });
  server.enqueue(
    { toolCalls: [{ id: "d", name: "mcp__fake__die", input: {} }] },
    { toolCalls: [{ id: "e", name: "mcp__fake__echo", input: { text: "back" } }] },
    { text: "done" },
  );
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  assert.deepEqual(lines.filter((l) => l.kind === "tool-result").map((l) => [l.tool_call_id, l.is_error, l.result]), [
    ["d", true, 'MCP server "fake" exited during the call; it was not repeated.'],
    ["e", false, "echo: back"],
  ]);
  const disconnected = lines.filter((l) => l.kind === "mcp-server" && l.status === "disconnected");
  assert.equal(disconnected.length, 1);
  assert.match(r.stderr, /^keen: mcp: server "fake" disconnected; the next call reconnects once \(log: .*fake\.log\)\n$/);

  // --once: the restart fails, so the tools go away and the run still ends normally.
  server.reset();
  const marker = join(sb.root, "started-once");
  const sb2 = mcpSandbox(server.url, { mcpServers: { fake: fakeServer("--once", { args: [fakeServer().args[0], "--once", marker] }) } });
  server.enqueue(
    { toolCalls: [{ id: "d", name: "mcp__fake__die", input: {} }] },
    { toolCalls: [{ id: "e", name: "mcp__fake__echo", input: { text: "back" } }] },
    { text: "done" },
  );
  const r2 = await sb2.run(["run", "--headless", "--no-stdin", "go"]);
  assert.equal(r2.code, 0, r2.stderr);
  const lines2 = parseLines(r2.stdout);
  const results = lines2.filter((l) => l.kind === "tool-result").map((l) => [l.tool_call_id, l.is_error, l.result]);
  assert.equal(results[1]![1], true);
  assert.equal(results[1]![2], 'MCP server "fake" exited and could not be restarted: the server exited (code 4) before it was ready');
  assert.deepEqual(lines2.filter((l) => l.kind === "mcp-server" && l.status === "tools-changed").map((l) => l.tools), [[]]);
  assert.ok(!server.requests[2]!.body.tools.some((t: any) => t.name.startsWith("mcp__")), "a dead server's tools are no longer offered");
  assert.equal(lines2.at(-1)!.status, "success");
});

test("interrupt during a slow MCP call: the server is told (cancellation), the run ends interrupted", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: fakeServer() } });
  const marks = join(sb.root, "marks");
  server.enqueue({ toolCalls: [{ id: "s", name: "mcp__fake__slow", input: { ms: 20000 } }] });
  const r = await sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", "go"], {
    env: { MCP_FAKE_MARKS: marks },
    onSpawn: (child) => void waitForStdout(child, (out) => out.includes('"kind":"tool-start"')).then(() => child.kill("SIGINT"), () => {}),
  });
  assert.equal(r.code, 130, r.stderr);
  const lines = parseLines(r.stdout);
  assert.deepEqual(lines.filter((l) => l.kind === "tool-result").map((l) => [l.is_error, l.result]), [[true, "Interrupted: the call was cancelled."]]);
  assert.equal(lines.at(-1)!.status, "interrupted");
  // Keen closes the server's stdin and waits for it to exit, so the server has handled the cancellation by now.
  assert.equal(readFileSync(marks, "utf8"), "cancelled 20000\n");
});

test("a call longer than callTimeoutMs fails that call with a clear message and is cancelled", async () => {
  const sb = mcpSandbox(server.url, { mcp: { callTimeoutMs: 500 }, mcpServers: { fake: fakeServer() } });
  const marks = join(sb.root, "marks");
  server.enqueue({ toolCalls: [{ id: "s", name: "mcp__fake__slow", input: { ms: 20000 } }] }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"], { env: { MCP_FAKE_MARKS: marks } });
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  assert.deepEqual(lines.filter((l) => l.kind === "tool-result").map((l) => [l.is_error, l.result]), [
    [true, 'MCP tool slow on "fake" timed out after 0.5 s (callTimeoutMs); the call was cancelled.'],
  ]);
  assert.equal(readFileSync(marks, "utf8"), "cancelled 20000\n");
});

test("a stdio server's whole process group ends with the run (what the server started, too)", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: fakeServer() } });
  server.enqueue({ toolCalls: [{ id: "p", name: "mcp__fake__spawn_child", input: {} }] }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"]);
  assert.equal(r.code, 0, r.stderr);
  const pid = Number(parseLines(r.stdout).find((l) => l.kind === "tool-result")!.result);
  assert.ok(pid > 0);
  // The group was signalled before keen exited; wait (bounded) for the kernel to reap the grandchild.
  for (const deadline = Date.now() + 20_000; alive(pid) && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(alive(pid), false, `sleep ${pid} outlived the run`);
  assert.equal(existsSync(join(sb.home, "mcp-logs", "fake.log")), true);
});

test("Ctrl-C while a server hangs at connect: keen ends at once and takes the server's group with it", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { stuck: fakeServer("--hang", { connectTimeoutMs: 20_000 }) } });
  const marks = join(sb.root, "marks");
  let pid = 0;
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"], {
    env: { MCP_FAKE_MARKS: marks },
    onSpawn: (child) => {
      // The server writes its pid once it runs; wait for that (bounded) rather than for a guessed time.
      const poll = setInterval(() => {
        const text = existsSync(marks) ? readFileSync(marks, "utf8") : "";
        if (!text.includes("\n")) return;
        clearInterval(poll);
        pid = Number(/pid (\d+)/.exec(text)![1]);
        child.kill("SIGINT");
      }, 20);
      child.once("close", () => clearInterval(poll));
    },
    timeoutMs: 15_000,
  });
  assert.ok(pid > 0, `the server never started; stderr: ${r.stderr}`);
  assert.equal(r.signal, "SIGINT", "died of the signal, as without MCP servers");
  for (const deadline = Date.now() + 20_000; alive(pid) && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(alive(pid), false, `the hung server ${pid} outlived keen`);
});
