/**
 * The CLI runner behind every front end, in ask mode: claude's permission
 * asks reach Keen through its relay (the fake `claude` calls the relay's MCP
 * tool as the real one does) and come back as each front end's own prompt —
 * `keen stdio`'s permission-request, ACP's request_permission, the TUI's
 * modal. Also: resume-session switching backends, and what the runner refuses.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { methods } from "@agentclientprotocol/sdk";
import { startMockLLMServer } from "../fakes/mock-llm-server.js";
import { chunkText, startAcp } from "./acp-client.js";
import { RELAY_TOOL, brief, collapse, sandbox } from "./cli-runner-sandbox.js";
import { startStdio } from "./stdio-client.js";
import { TMUX_MISSING, TmuxKeen } from "./tmux.js";

test("keen stdio --runner cli in ask mode: the CLI's ask is a permission-request; allow-always runs it and stops asking", async () => {
  const box = sandbox("tool-bash");
  const client = startStdio(["--runner", "cli", "--permission-mode", "ask"], box.env, box.workspace);
  client.send({ kind: "prompt", id: "p1", text: "run echo hi" });
  const request = await client.next((l) => l.kind === "permission-request");
  assert.equal(request.tool_name, "Bash");
  assert.equal(request.tool_call_id, "toolu_395138d655d37187c8d5e47b");
  assert.deepEqual(JSON.parse(request.input), { command: "echo hi" });
  client.send({ kind: "permission-response", id: "r1", request_id: request.request_id, decision: "allow-always" });
  const first = await client.next((l) => l.kind === "result");
  assert.equal(first.status, "success");
  assert.equal(first.text, "The command printed: hi");

  client.send({ kind: "prompt", id: "p2", text: "run echo hi again" });
  await client.response("p2");
  const { code } = await client.end();
  assert.equal(code, 0);
  const kinds = collapse(client.lines.filter((l) => l.kind !== "response").map(brief));
  assert.deepEqual(kinds, [
    "session-start", "text", "tool-use:Bash", "permission-request:Bash", "tool-start:Bash", "tool-result:Bash",
    "text-delta", "content-end", "text", "result",
    "text", "tool-use:Bash", "tool-start:Bash", "tool-result:Bash", "text-delta", "content-end", "text", "result",
  ]);
  const [a, b] = box.runs();
  assert.equal(a!.argv[a!.argv.indexOf("--permission-prompt-tool") + 1], RELAY_TOOL);
  assert.ok(!a!.argv.includes("--permission-mode"), "ask leaves the CLI's default mode: the CLI asks, Keen answers");
  const config = JSON.parse(a!.argv[a!.argv.indexOf("--mcp-config") + 1]!);
  assert.equal(config.mcpServers.keen.command, process.execPath);
  assert.match(config.mcpServers.keen.args[0], /dist\/permission-relay\.cjs$/);
  assert.ok(!existsSync(config.mcpServers.keen.env.KEEN_RELAY_SOCKET), "the socket is gone after the turn");
  assert.deepEqual(a!.asks, [{ behavior: "allow", updatedInput: { command: "echo hi" } }]);
  assert.deepEqual(b!.asks, [{ behavior: "allow", updatedInput: { command: "echo hi" } }], "the standing rule answers without asking");
});

// One keen stdio for the denial and the interrupt (each a Keen start of its own cost more than the turns).
test("ask mode, deny: the CLI gets the user's reason as its denial, the call never starts; an interrupt while the CLI waits for an answer kills it and ends the turn interrupted, claude and the relay's server gone; one-shot keen run cannot ask", async () => {
  const box = sandbox("tool-bash");
  const client = startStdio(["--runner", "cli", "--permission-mode", "ask"], box.env, box.workspace);
  client.send({ kind: "prompt", id: "p1", text: "run echo hi" });
  const request = await client.next((l) => l.kind === "permission-request");
  client.send({ kind: "permission-response", id: "r1", request_id: request.request_id, decision: "deny", message: "not now" });
  const result = await client.next((l) => l.kind === "result");
  assert.equal(result.text, "I was not allowed to run it.");
  const denial = client.lines.find((l) => l.kind === "tool-result")!;
  assert.equal(denial.is_error, true);
  assert.equal(denial.result, "The user denied this Bash call. They said: not now");
  assert.equal(box.runs()[0]!.asks!.length, 1);

  // The same call again, interrupted while the CLI waits for the answer.
  client.send({ kind: "prompt", id: "p2", text: "run echo hi" });
  await client.next((l) => l.kind === "permission-request");
  client.send({ kind: "interrupt", id: "i1" });
  const interrupted = await client.next((l) => l.kind === "result");
  assert.equal(interrupted.status, "interrupted");
  assert.equal((await client.end()).code, 0);
  assert.ok(!client.lines.some((l) => l.kind === "tool-start"), "a denied or interrupted call never starts");
  assert.deepEqual(box.leftovers(), [], "claude and the relay's MCP server are gone");
  assert.equal(box.runs().length, 1, "the interrupted fake claude never got an answer to log");

  // As with the embedded loop: one-shot keen run has nobody to ask: accept-edits answers no with the reason
  // (ask is refused: a usage error, test/cli/front-end-flags.test.ts).
  const edits = await box.run(["run", "--runner", "cli", "--permission-mode", "accept-edits", "--format", "json", "run echo hi"]);
  assert.equal(edits.code, 0, edits.stderr);
  assert.equal(JSON.parse(edits.stdout).text, "I was not allowed to run it.");
  const [, asked] = box.runs() as { asks: { behavior: string; message: string }[] }[];
  assert.equal(asked!.asks[0]!.behavior, "deny");
  assert.match(asked!.asks[0]!.message, /this one-shot run has nobody to ask/);
});

test("a Write ask carries the diff Keen's own write_file would make (through its guard), as for Keen's own tools", async () => {
  const box = sandbox("tool-write");
  writeFileSync(join(box.workspace, "notes.txt"), "old line\n");
  const client = startStdio(["--runner", "cli"], box.env, box.workspace);
  client.send({ kind: "prompt", id: "p1", text: "write notes" });
  const request = await client.next((l) => l.kind === "permission-request");
  assert.equal(request.tool_name, "Write");
  assert.equal(request.path, join(box.workspace, "notes.txt"));
  assert.match(request.diff, /^-old line$/m);
  assert.match(request.diff, /^\+hello$/m);
  client.send({ kind: "permission-response", id: "r1", request_id: request.request_id, decision: "allow-once" });
  assert.equal((await client.next((l) => l.kind === "result")).text, "Wrote notes.txt.");
  assert.equal((await client.end()).code, 0);
  assert.deepEqual(box.runs()[0]!.asks, [{ behavior: "allow", updatedInput: { file_path: join(box.workspace, "notes.txt"), content: "hello\n" } }]);
});

test("keen stdio: resume-session into a CLI session runs the CLI (resumed), into an embedded one Keen's own loop; the CLI session's compaction is refused with the reason, live and offline", async () => {
  const server = await startMockLLMServer();
  try {
    server.enqueue({ text: "Embedded answer." }, { text: "Embedded again." });
    const box = sandbox("text-thinking,resume-2", {}, server.url);
    const keyed = { ANTHROPIC_API_KEY: "test-key" };
    const cli = await box.run(["run", "--runner", "cli", "--format", "json", "say hi"]);
    assert.equal(cli.code, 0, cli.stderr);
    const cliId = JSON.parse(cli.stdout).session_id;

    // The embedded session is this process's first (no --runner: Keen's own loop); it is left for the
    // CLI session and resumed from the store. --sandbox off: its turns only talk, no tool runs.
    const client = startStdio(["--permission-mode", "read-only", "--sandbox", "off"], { ...box.env, ...keyed }, box.workspace);
    client.send({ kind: "prompt", id: "p0", text: "hello" });
    const embedded = await client.next((l) => l.kind === "result");
    assert.deepEqual([embedded.status, embedded.text], ["success", "Embedded answer."]);
    const embeddedId = embedded.session_id;
    assert.equal((await client.response("p0")).ok, true);
    client.send({ kind: "resume-session", id: "s1", session: cliId });
    assert.equal((await client.response("s1")).ok, true);
    client.send({ kind: "prompt", id: "p1", text: "say it again" });
    const viaCli = await client.next((l) => l.kind === "result");
    assert.equal(viaCli.session_id, cliId);
    assert.deepEqual(box.runs()[1]!.argv.slice(7, 9), ["--resume", box.runs()[0]!.argv[8]]);
    assert.equal(box.runs()[1]!.argv[box.runs()[1]!.argv.indexOf("--permission-mode") + 1], "plan");
    // What the runner cannot do is said: compaction is refused with the reason, live and offline.
    client.send({ kind: "compact", id: "c1" });
    const compact = await client.response("c1");
    assert.equal(compact.ok, false);
    assert.match(compact.error, /not available with the CLI runner/);

    client.send({ kind: "resume-session", id: "s2", session: embeddedId });
    await client.response("s2");
    client.send({ kind: "prompt", id: "p2", text: "and you?" });
    const viaLoop = await client.next((l) => l.kind === "result");
    assert.equal(viaLoop.text, "Embedded again.");
    assert.equal((await client.end()).code, 0);
    assert.equal(box.runs().length, 2, "the embedded session never ran claude, nor did compaction");
    assert.equal(server.requests.length, 2);
    const offline = await box.run(["sessions", "compact", cliId]);
    assert.equal(offline.code, 2);
    assert.match(offline.stderr, /runs through the CLI runner/);
    assert.equal(box.runs().length, 2);
  } finally {
    await server.close();
  }
});

// --output-schema and cassettes with the CLI runner are usage errors: test/cli/front-end-flags.test.ts, in process.
test("keen acp --runner cli: the CLI's ask is the editor's permission request; its answer runs the call", async () => {
  const box = sandbox("tool-bash");
  const acp = startAcp(["--runner", "cli"], box.env, box.workspace);
  acp.answer("allow-once");
  const reply = await acp.run(async (ctx) => {
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: box.workspace, mcpServers: [] });
    return ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "run echo hi" }] });
  });
  assert.equal(reply.stopReason, "end_turn");
  assert.equal((await acp.exited).code, 0, acp.stderr());
  assert.equal(acp.permissions.length, 1);
  assert.equal(acp.permissions[0]!.toolCall.toolCallId, "toolu_395138d655d37187c8d5e47b");
  assert.equal(chunkText(acp.updates, "agent_message_chunk"), "The command printed: hi");
  assert.deepEqual(box.runs()[0]!.asks, [{ behavior: "allow", updatedInput: { command: "echo hi" } }]);
  // The CLI runs its own turns: Keen offers neither /compact nor /undo for them.
  const offered = acp.updates.map((n) => n.update).find((u) => u.sessionUpdate === "available_commands_update");
  assert.deepEqual(offered?.sessionUpdate === "available_commands_update" && offered.availableCommands.map((c) => c.name), ["mode"]);
});

test("the TUI with --runner cli (tmux): the CLI's ask is the TUI's permission modal; y runs the call; --resume goes on with the CLI session", { skip: TMUX_MISSING ?? false }, async () => {
  const box = sandbox("tool-bash,resume-2");
  const t = new TmuxKeen(["--runner", "cli"], box.env, box.workspace);
  try {
    await t.waitFor("Type a prompt");
    t.type("run echo hi");
    t.keys(["Enter"]);
    const modal = await t.waitFor("Permission: Bash");
    assert.match(modal, /echo hi/);
    t.type("y");
    await t.waitFor("The command printed: hi");
    t.keys(["C-d"]);
    await t.waitFor("[exit 0]");
    assert.deepEqual(box.runs()[0]!.asks, [{ behavior: "allow", updatedInput: { command: "echo hi" } }]);
    const [session] = await box.sessions();
    assert.equal((await box.show(session!.id)).events.find((e) => e.kind === "turn-end")?.runner, "cli");

    // The TUI's resume goes on with the same CLI session, no --runner needed.
    const again = new TmuxKeen(["--resume", session!.id], box.env, box.workspace);
    try {
      await again.waitFor("The command printed: hi");
      again.type("say it again");
      again.keys(["Enter"]);
      await again.waitFor("Hello! How can I help you today?");
      again.keys(["C-d"]);
      await again.waitFor("[exit 0]");
    } finally {
      again.kill();
    }
    const [first, second] = box.runs();
    assert.deepEqual(second!.argv.slice(7, 9), ["--resume", first!.argv[8]]);
  } finally {
    t.kill();
  }
});
