import { after, before, beforeEach, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { methods, type SessionNotification } from "@agentclientprotocol/sdk";
import { startMockLLMServer, type MockLLMServer } from "../fakes/mock-llm-server.js";
import { makeSandbox } from "./harness.js";
import { chunkText, startAcp, updateKinds } from "./acp-client.js";

const MODEL = "anthropic/claude-test";
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
let server: MockLLMServer;
const roots: string[] = [];
before(async () => (server = await startMockLLMServer()));
after(async () => {
  await server.close();
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});
beforeEach(() => server.reset());

function open(args: string[] = []) {
  const sb = makeSandbox(server.url);
  roots.push(sb.root);
  return { sb, acp: startAcp(["--model", MODEL, ...args], sb.env, sb.workspace) };
}

const of = (updates: SessionNotification[], sessionId: string) => updates.filter((n) => n.sessionId === sessionId);

test("initialize advertises what Keen supports; session/new gives modes and the model option; unknown sessions are JSON-RPC errors", async () => {
  const { sb, acp } = open();
  await acp.run(async (ctx, init) => {
    assert.deepEqual(init.agentInfo, { name: "keen", title: "Keen", version: pkg.version });
    assert.deepEqual(init.agentCapabilities, {
      loadSession: true, promptCapabilities: { image: false, audio: false, embeddedContext: true }, sessionCapabilities: { list: {} },
    });
    assert.equal(init.protocolVersion, 1);
    const created = await ctx.request(methods.agent.session.new, { cwd: sb.workspace, mcpServers: [{ name: "files", command: "mcp-files", args: [], env: [] }] });
    assert.match(created.sessionId, /^[0-9a-f-]{36}$/);
    assert.deepEqual(created.modes, {
      currentModeId: "ask",
      availableModes: [
        { id: "ask", name: "Ask", description: "Reads run; edits and commands ask first." },
        { id: "accept-edits", name: "Accept edits", description: "Reads and edits run; commands ask first." },
        { id: "auto", name: "Auto", description: "Everything runs without asking." },
        { id: "read-only", name: "Read-only", description: "Reads run; edits and commands are refused." },
      ],
    });
    const [option] = created.configOptions ?? [];
    assert.equal(option?.id, "model");
    assert.equal(option?.type === "select" && option.currentValue, MODEL);
    await assert.rejects(ctx.request(methods.agent.session.prompt, { sessionId: "no-such-session", prompt: [{ type: "text", text: "hi" }] }),
      (error: { code: number; data?: { sessionId?: string } }) => error.code === -32002 && error.data?.sessionId === "no-such-session");
    await assert.rejects(ctx.request(methods.agent.session.load, { sessionId: "no-such-session", cwd: sb.workspace, mcpServers: [] }),
      (error: { code: number }) => error.code === -32002);
  });
  const { code } = await acp.exited;
  assert.equal(code, 0, acp.stderr());
  assert.match(acp.stderr(), /MCP servers are not supported yet; ignoring files/);
  assert.ok(acp.raw.every((line) => JSON.parse(line).jsonrpc === "2.0"), "stdout carries JSON-RPC only");
});

test("a prompt streams thought and message chunks, tool calls with kinds and locations, and diffs for a write and an edit", async () => {
  const { sb, acp } = open(["--permission-mode", "auto"]);
  writeFileSync(join(sb.workspace, "app.txt"), "alpha\nbeta\n");
  server.enqueue(
    { thinking: "Plan the change.", text: "Writing notes first.", toolCalls: [{ name: "write_file", input: { path: "notes.txt", content: "one\ntwo\n" } }] },
    { toolCalls: [{ name: "edit_file", input: { path: "app.txt", old_string: "beta", new_string: "gamma" } }] },
    { toolCalls: [{ name: "bash", input: { command: "echo hello" } }] },
    { text: "All done." },
  );
  const sessionId = await acp.run(async (ctx) => {
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: sb.workspace, mcpServers: [] });
    const reply = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "take notes and fix app.txt" }] });
    assert.equal(reply.stopReason, "end_turn");
    return sessionId;
  });
  assert.equal((await acp.exited).code, 0, acp.stderr());
  const updates = of(acp.updates, sessionId);
  assert.deepEqual(updateKinds(updates), [
    "agent_thought_chunk", "agent_message_chunk",
    "tool_call", "tool_call_update:in_progress", "tool_call_update:completed",
    "tool_call", "tool_call_update:in_progress", "tool_call_update:completed",
    "tool_call", "tool_call_update:in_progress", "tool_call_update:completed",
    "agent_message_chunk",
  ]);
  assert.equal(chunkText(updates, "agent_thought_chunk"), "Plan the change.");
  assert.equal(chunkText(updates, "agent_message_chunk"), "Writing notes first.All done.");
  const calls = updates.map((n) => n.update).filter((u) => u.sessionUpdate === "tool_call");
  assert.deepEqual(calls.map((c) => [c.title, c.kind, c.status, c.locations]), [
    ["Write notes.txt", "edit", "pending", [{ path: join(sb.workspace, "notes.txt") }]],
    ["Edit app.txt", "edit", "pending", [{ path: join(sb.workspace, "app.txt") }]],
    ["echo hello", "execute", "pending", []],
  ]);
  const done = updates.map((n) => n.update).filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
  assert.deepEqual(done[0]!.sessionUpdate === "tool_call_update" && done[0]!.content, [
    { type: "diff", path: join(sb.workspace, "notes.txt"), oldText: null, newText: "one\ntwo\n" },
  ]);
  assert.deepEqual(done[1]!.sessionUpdate === "tool_call_update" && done[1]!.content, [
    { type: "diff", path: join(sb.workspace, "app.txt"), oldText: "alpha\nbeta\n", newText: "alpha\ngamma\n" },
  ]);
  const bash = done[2]!.sessionUpdate === "tool_call_update" ? done[2]!.content : undefined;
  assert.match(JSON.stringify(bash), /hello/);
  // The ACP session is a Keen session: every other front end sees it.
  const shown = await sb.show(sessionId);
  assert.equal(shown.session.title, "take notes and fix app.txt");
  assert.deepEqual(server.unexpected, []);
});
