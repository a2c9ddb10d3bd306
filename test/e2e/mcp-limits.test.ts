/**
 * MCP servers that push the stdio transport's limits, end to end through
 * `bin/keen run --headless` (the fake server's --stress tools): a large result
 * (cut for the model), an interrupt in the middle of a transfer, a message past the
 * 64 MiB cap (the call fails, the server is restarted), a flood of
 * list_changed, and what a server's stderr log keeps.
 *
 * Sizes: each MiB through the pipe costs both processes CPU, so each transfer is as large as what
 * it proves needs. A result many pipe reads long and ten times the cut (that 16 MiB are joined in
 * linear time: test/mcp/line-framer.test.ts, in-process); an interrupt once megabytes of an
 * endless message are in (the server goes on sending; how much is in makes no difference to
 * Keen); one 64 KiB chunk past the cap.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { parseLines } from "./harness.js";
import { startStdio } from "./stdio-client.js";
import { fakeServer, mcpSandbox } from "./mcp-helpers.js";

const server = useMockLLMServer();
const MiB = 1024 * 1024;
/** A result of this many characters: 10 × the cut at 100,000, 16 reads of a 64 KiB pipe. */
const BIG = MiB;
/** How much of an endless message the server has sent before the interrupt. */
const SENT = 2 * MiB;
/** Keen's cap on one message (MAX_MESSAGE_BYTES in app/mcp/line-framer.ts), and one chunk of the stream past it. */
const CAP = 64 * MiB;
const PAST_CAP = CAP + 64 * 1024;
const stress = () => fakeServer("--stress");

const results = (lines: Record<string, any>[]) => lines.filter((l) => l.kind === "tool-result").map((l) => [l.tool_call_id, l.is_error, l.result]);

// One run for two checks (a Keen and a server start less): the big result, and what the server's stderr log keeps.
test("a 1 MiB tool result arrives whole and goes to the model cut to 100,000 characters with a note; the server's stderr log: its env values, provider keys and secret-looking variables redacted, control characters made visible", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: fakeServer("--stress", { env: { SERVICE_PASSWORD: "pw-in-server-env-42" } }) } });
  const text = "env pw-in-server-env-42, key test-key, token ghp_from_keen_env_9\n\x1b]52;c;aGk=\x07\x1b[31mred\x1b[0m\n";
  server.enqueue({ toolCalls: [{ id: "b", name: "mcp__fake__big", input: { bytes: BIG } }, { id: "l", name: "mcp__fake__stderr", input: { text } }] }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"], { env: { GITHUB_TOKEN: "ghp_from_keen_env_9" }, timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  const note = `\n[cut: the result had ${BIG} characters; the first 100000 are shown]`;
  assert.deepEqual(results(lines), [["b", false, `${"x".repeat(100_000)}${note}`], ["l", false, "written"]]);
  const sent = server.requests[1]!.body.messages.at(-1).content[0];
  assert.equal(sent.content, `${"x".repeat(100_000)}${note}`, "the model got the cut result, not 1 MiB");
  assert.equal(lines.at(-1)!.status, "success");
  assert.equal(
    readFileSync(join(sb.home, "mcp-logs", "fake.log"), "utf8"),
    "env [redacted], key [redacted], token [redacted]\n␛]52;c;aGk=␇␛[31mred␛[0m\n",
  );
});

// Ctrl-C in keen run during an MCP call (exit 130, the call cancelled, the run interrupted) is
// test/e2e/mcp-failures.test.ts "interrupt during a slow MCP call"; an interrupt in the middle of a
// large transfer is the keen stdio test below: the engine's abort is the same for both front ends.
test("keen stdio: `interrupt` in the middle of a large transfer ends the turn; the session goes on", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: stress() } });
  const marks = join(sb.root, "marks");
  const client = startStdio(["--permission-mode", "auto"], { ...sb.env, MCP_FAKE_MARKS: marks }, sb.workspace, 120_000);
  try {
    server.enqueue(
      { toolCalls: [{ id: "s", name: "mcp__fake__stream", input: { fast_bytes: SENT } }] },
      { toolCalls: [{ id: "e", name: "mcp__fake__echo", input: { text: "after" } }] },
      { text: "done" },
    );
    client.send({ kind: "prompt", id: "1", text: "go" });
    await client.next((l) => l.kind === "tool-start");
    for (let waited = 0; !(existsSync(marks) && readFileSync(marks, "utf8").includes("sent")); waited += 20) {
      assert.ok(waited < 100_000, `the server never sent ${SENT} bytes`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    client.send({ kind: "interrupt", id: "stop" });
    const first = await client.next((l) => l.kind === "result");
    assert.equal(first.status, "interrupted");
    client.send({ kind: "prompt", id: "2", text: "again" });
    assert.equal((await client.response("2")).data.status, "success");
    assert.deepEqual(client.lines.filter((l) => l.kind === "tool-result").map((l) => [l.tool_call_id, l.result]), [
      ["s", "Interrupted: the call was cancelled."], ["e", "echo: after"],
    ]);
  } finally {
    const end = await client.end();
    assert.equal(end.code, 0, end.stderr);
  }
});

test("a message over 64 MiB (a server that never sends a newline): that call fails saying so, the server is restarted, the next call works", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: stress() } });
  server.enqueue(
    { toolCalls: [{ id: "s", name: "mcp__fake__stream", input: { fast_bytes: PAST_CAP } }] },
    { toolCalls: [{ id: "e", name: "mcp__fake__echo", input: { text: "back" } }] },
    { text: "done" },
  );
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  const log = join(sb.home, "mcp-logs", "fake.log");
  const why = "the server sent a message over 64 MiB (the limit for one message); Keen stopped it and starts it again";
  assert.deepEqual(results(lines), [
    ["s", true, `MCP tool stream on "fake" failed: ${why}. Ask for less at a time.`],
    ["e", false, "echo: back"],
  ]);
  const notices = lines.filter((l) => l.kind === "mcp-server" && l.status !== "connected").map((l) => [l.status, l.message]);
  assert.deepEqual(notices, [["disconnected", `server "fake": ${why} (log: ${log})`]]);
  assert.equal(r.stderr, `keen: mcp: server "fake": ${why} (log: ${log})\n`);
  assert.equal(lines.at(-1)!.status, "success");
});

// One keen stdio and one server for both floods (a Keen and a server start less): the second turn's
// counts are what it added to the first's.
test("a flood of list_changed costs a few tools/list requests, not one each; the tool it added is offered; a flood that never stops does not hold the turn", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: stress() } });
  server.enqueue(
    { toolCalls: [{ id: "f", name: "mcp__fake__flood", input: { count: 5000, add: true } }] },
    { toolCalls: [{ id: "n", name: "mcp__fake__added", input: {} }, { id: "c", name: "mcp__fake__stats", input: {} }] },
    { text: "done" },
    { toolCalls: [{ id: "f2", name: "mcp__fake__flood", input: { count: 0 } }] },
    { toolCalls: [{ id: "e", name: "mcp__fake__echo", input: { text: "still here" } }, { id: "c2", name: "mcp__fake__stats", input: {} }] },
    { text: "done" },
  );
  const client = startStdio(["--permission-mode", "auto"], sb.env, sb.workspace, 120_000);
  try {
    client.send({ kind: "prompt", id: "1", text: "go" });
    assert.equal((await client.response("1")).data.status, "success");
    const lines = [...client.lines];
    const [flood, added, stats] = results(lines);
    assert.deepEqual([flood, added], [["f", false, "sent 5000"], ["n", false, "added works"]]);
    assert.ok(server.requests[1]!.body.tools.some((t: any) => t.name === "mcp__fake__added"), "the next request offers the new tool");
    // One list at connect, then at most one refresh while the call ran and one at its end.
    const count = Number(/tools\/list requests: (\d+)/.exec(stats![2])![1]);
    assert.ok(count >= 2 && count <= 3, `tools/list requests: ${count}`);
    assert.deepEqual(lines.filter((l) => l.kind === "mcp-server" && l.status === "tools-changed").length, 1);

    client.send({ kind: "prompt", id: "2", text: "again" });
    assert.equal((await client.response("2")).data.status, "success", "the endless flood does not hold the turn");
    const [, , , , echo, stats2] = results(client.lines);
    assert.deepEqual(echo, ["e", false, "echo: still here"]);
    // Per model request one refresh, per call at most two: bounded however long the flood goes on.
    const count2 = Number(/tools\/list requests: (\d+)/.exec(stats2![2])![1]) - count;
    assert.ok(count2 <= 6, `tools/list requests in the second turn: ${count2}`);
  } finally {
    const end = await client.end();
    assert.equal(end.code, 0, end.stderr);
  }
});
