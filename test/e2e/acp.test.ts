import { after, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { methods, type SessionNotification } from "@agentclientprotocol/sdk";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { chunkText, openAcp, sharedAcp, updateKinds } from "./acp-client.js";

const MODEL = "anthropic/claude-test";
const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
const server = useMockLLMServer();
const open = (args: string[] = []) => openAcp(server.url, ["--model", MODEL, ...args]);

const of = (updates: SessionNotification[], sessionId: string) => updates.filter((n) => n.sessionId === sessionId);

/*
 * Tests that need no flags of their own share one `keen acp` (default flags, one sandbox), each in a
 * session of its own, as an editor keeps one agent process for many sessions; a process costs ~0.7 s
 * of CPU to start. "the shared keen acp ..." checks how it exits. Tests of flags and of SIGTERM start
 * their own. Updates are told apart by session id.
 */
const acpShared = sharedAcp(() => server.url, ["--model", MODEL]);
const shared = acpShared.get;
after(acpShared.kill);

// The shared process has the default flags this test is about; its exit and stdout are checked at the end.
test("initialize advertises what Keen supports; session/new gives modes and the model option; unknown sessions are JSON-RPC errors", async () => {
  const { sb, ctx, init } = await shared();
  assert.deepEqual(init.agentInfo, { name: "keen", title: "Keen", version: pkg.version });
  assert.deepEqual(init.agentCapabilities, {
    loadSession: true, promptCapabilities: { image: true, audio: false, embeddedContext: true }, sessionCapabilities: { list: {}, resume: {}, close: {} },
    mcpCapabilities: { http: true, sse: true },
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
  // A server that cannot start ("files") does not fail session/new; test/e2e/acp-mcp.test.ts covers servers that do.
});

test("a prompt streams thought and message chunks, tool calls with kinds and locations, and diffs for a write and an edit", async () => {
  const { sb, acp } = open(["--permission-mode", "auto"]);
  writeFileSync(join(sb.workspace, "app.txt"), "alpha\nbeta\n");
  server.enqueue(
    { thinking: "Plan the change.", text: "Writing notes first.", toolCalls: [{ name: "write_file", input: { path: "notes.txt", content: "one\ntwo\n" } }] },
    { toolCalls: [{ name: "edit_file", input: { path: "app.txt", old_string: "beta", new_string: "gamma" } }] },
    { toolCalls: [{ name: "bash", input: { command: "echo hello; sleep 0.5; echo world" } }] },
    { deltas: ["All done.\n<keen_m", "emory>\n- MEMO-7f3: notes\n</keen_memory>"] },
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
    // Announced once session/new has answered (test/e2e/acp-contract.test.ts checks what it lists).
    "available_commands_update",
    "agent_thought_chunk", "agent_message_chunk",
    "tool_call", "tool_call_update:in_progress", "tool_call_update:completed",
    "tool_call", "tool_call_update:in_progress", "tool_call_update:completed",
    "tool_call", "tool_call_update:in_progress", "tool_call_update:completed",
    "agent_message_chunk",
  ]);
  assert.equal(chunkText(updates, "agent_thought_chunk"), "Plan the change.");
  // Tool memory never reaches the client.
  assert.equal(chunkText(updates, "agent_message_chunk").trim(), "Writing notes first.All done.");
  assert.ok(!JSON.stringify(acp.updates).includes("MEMO-7f3"));
  const calls = updates.map((n) => n.update).filter((u) => u.sessionUpdate === "tool_call");
  assert.deepEqual(calls.map((c) => [c.title, c.kind, c.status, c.locations]), [
    ["Write notes.txt", "edit", "pending", [{ path: join(sb.workspace, "notes.txt") }]],
    ["Edit app.txt", "edit", "pending", [{ path: join(sb.workspace, "app.txt") }]],
    ["echo hello; sleep 0.5; echo world", "execute", "pending", []],
  ]);
  const done = updates.map((n) => n.update).filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
  assert.deepEqual(done[0]!.sessionUpdate === "tool_call_update" && done[0]!.content, [
    { type: "diff", path: join(sb.workspace, "notes.txt"), oldText: null, newText: "one\ntwo\n" },
  ]);
  assert.deepEqual(done[1]!.sessionUpdate === "tool_call_update" && done[1]!.content, [
    { type: "diff", path: join(sb.workspace, "app.txt"), oldText: "alpha\nbeta\n", newText: "alpha\ngamma\n" },
  ]);
  const bash = done[2]!.sessionUpdate === "tool_call_update" ? done[2]!.content : undefined;
  assert.match(JSON.stringify(bash), /hello\\nworld/);
  // While it ran, the output so far (the engine's bounded tail) replaced the call's content.
  const progress = updates.map((n) => n.update).filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress" && u.content);
  assert.ok(progress.some((u) => /hello/.test(JSON.stringify(u)) && !/world/.test(JSON.stringify(u))), JSON.stringify(progress));
  assert.deepEqual(acp.fsRequests, [], "a client without fs capabilities is never asked for files");
  // The ACP session is a Keen session: every other front end sees it.
  const shown = await sb.show(sessionId);
  assert.equal(shown.session.title, "take notes and fix app.txt");
  assert.deepEqual(server.unexpected, []);
});

test("permission requests: reject once, then allow always (no more asking for that tool); the model hears the answers", async () => {
  const { sb, acp, ctx } = await shared();
  const bash = (command: string) => ({ toolCalls: [{ name: "bash", input: { command } }] });
  server.enqueue(bash("echo first"), { text: "You said no." }, bash("echo second"), { text: "Ran it." }, bash("echo third"), { text: "Ran again." });
  const from = acp.permissions.length;
  acp.answer("deny", "allow-always");
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: sb.workspace, mcpServers: [] });
  const prompt = (text: string) => ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  assert.equal((await prompt("one")).stopReason, "end_turn");
  assert.equal((await prompt("two")).stopReason, "end_turn");
  assert.equal((await prompt("three")).stopReason, "end_turn");
  const permissions = acp.permissions.slice(from);
  assert.equal(permissions.length, 2, "allow-always holds for the third call");
  const [asked] = permissions;
  assert.deepEqual(asked!.options.map((o) => [o.optionId, o.kind]), [
    ["allow-once", "allow_once"], ["allow-always", "allow_always"], ["deny", "reject_once"], ["deny-always", "reject_always"],
  ]);
  assert.equal(asked!.sessionId, sessionId);
  assert.deepEqual([asked!.toolCall.title, asked!.toolCall.kind], ["echo first", "execute"]);
  const updates = of(acp.updates, sessionId);
  const statuses = updates.map((n) => n.update).filter((u) => u.sessionUpdate === "tool_call_update" && u.status !== "in_progress")
    .map((u) => u.sessionUpdate === "tool_call_update" && u.status);
  assert.deepEqual(statuses, ["failed", "completed", "completed"]);
  const toolResults = server.requests.map((r) => JSON.stringify(r.body.messages.at(-1)));
  assert.match(toolResults[1]!, /The user denied this bash call/);
  assert.match(toolResults[3]!, /second/);
  assert.match(toolResults[5]!, /third/);
});

test("session/cancel mid-stream answers the prompt cancelled at once; the session takes the next prompt", async () => {
  const { sb, acp, ctx } = await shared();
  server.enqueue({ text: "word ".repeat(400), delayMs: 25, chunkSize: 5 }, { text: "Fresh answer." });
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: sb.workspace, mcpServers: [] });
  const pending = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "talk a lot" }] });
  await acp.waitFor((n) => n.sessionId === sessionId && n.update.sessionUpdate === "agent_message_chunk");
  await ctx.notify(methods.agent.session.cancel, { sessionId });
  // The answer streams for seconds more: a cancel that waited for it would end "end_turn".
  assert.equal((await pending).stopReason, "cancelled");
  const next = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "again" }] });
  assert.equal(next.stopReason, "end_turn");
  assert.match(chunkText(of(acp.updates, sessionId), "agent_message_chunk"), /Fresh answer\.$/);
  // The partial answer is stored: the next request saw it.
  assert.match(JSON.stringify(server.requests[1]!.body.messages), /turn interrupted/);
});

test("session/load replays a session made by keen run (tool calls with their diffs) before answering; its next turn sees that history", async () => {
  const { sb, acp, ctx } = await shared();
  server.enqueue(
    { text: "Listing.", toolCalls: [{ name: "list", input: {} }] },
    { toolCalls: [{ name: "write_file", input: { path: "notes.txt", content: "first\n" } }] },
    { text: "An empty workspace." },
  );
  // keen run's main() in this process makes the session (a Keen start less; the editor's side is the real
  // process here). --sandbox off: its calls are list and write_file, no command, and in process it must not warm up.
  const run = await sb.main(["run", "--model", MODEL, "--format", "json", "--no-stdin", "--sandbox", "off", "what is here?"]);
  assert.equal(run.code, 0, run.stderr);
  const sessionId = JSON.parse(run.stdout).session_id as string;
  server.enqueue({ text: "Still empty." });
  const loaded = await ctx.request(methods.agent.session.load, { sessionId, cwd: sb.workspace, mcpServers: [] });
  // Everything was replayed before the answer (the commands follow it).
  assert.deepEqual(updateKinds(of(acp.updates, sessionId).filter((n) => n.update.sessionUpdate !== "available_commands_update")), [
    "user_message_chunk", "agent_message_chunk", "tool_call", "tool_call_update:completed", "tool_call", "tool_call_update:completed", "agent_message_chunk",
  ]);
  const replayed = of(acp.updates, sessionId).map((n) => n.update).filter((u) => u.sessionUpdate !== "available_commands_update");
  assert.deepEqual(replayed.filter((u) => u.sessionUpdate === "tool_call").map((u) => u.sessionUpdate === "tool_call" && [u.title, u.kind]), [["List .", "read"], ["Write notes.txt", "edit"]]);
  assert.deepEqual(replayed.at(-2), {
    sessionUpdate: "tool_call_update", toolCallId: (replayed.at(-3) as { toolCallId: string }).toolCallId, status: "completed",
    content: [{ type: "diff", path: join(sb.workspace, "notes.txt"), oldText: null, newText: "first\n" }],
  });
  assert.equal(chunkText(of(acp.updates, sessionId), "user_message_chunk"), "what is here?");
  assert.equal(loaded.modes?.currentModeId, "ask");
  const reply = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "and now?" }] });
  assert.equal(reply.stopReason, "end_turn");
  assert.match(JSON.stringify(server.requests[3]!.body.messages), /what is here\?.*An empty workspace\..*and now\?/s);
  const shown = await sb.show(sessionId);
  assert.deepEqual(shown.events.filter((e) => e.kind === "text" && e.role === "user").map((e) => e.content), ["what is here?", "and now?"]);
});

test("session/close interrupts and stores the running turn, then the id is unknown; session/resume takes the session up again without replaying it; keen run --session continues it", async () => {
  const { sb, acp, ctx } = await shared();
  server.enqueue({ text: "word ".repeat(400), delayMs: 25, chunkSize: 5 }, { text: "Back again." });
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: sb.workspace, mcpServers: [] });
  const pending = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "talk a lot" }] });
  await acp.waitFor((n) => n.sessionId === sessionId && n.update.sessionUpdate === "agent_message_chunk");
  await ctx.request(methods.agent.session.close, { sessionId });
  assert.equal((await pending).stopReason, "cancelled");
  const prompt = () => ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "still there?" }] });
  await assert.rejects(prompt(), (e: { code: number }) => e.code === -32002);
  // Keen answers -32002; the SDK's client takes that as success for close, as ACP recommends (same end state).
  const before = acp.raw.length;
  await ctx.request(methods.agent.session.close, { sessionId });
  assert.ok(acp.raw.slice(before).some((line) => JSON.parse(line).error?.code === -32002));
  await assert.rejects(ctx.request(methods.agent.session.resume, { sessionId: "no-such-session", cwd: sb.workspace }), (e: { code: number }) => e.code === -32002);
  const seen = acp.updates.length;
  const resumed = await ctx.request(methods.agent.session.resume, { sessionId, cwd: sb.workspace, mcpServers: [] });
  assert.equal(resumed.modes?.currentModeId, "ask");
  assert.equal(acp.updates.length, seen, "resume sends no history");
  assert.equal((await prompt()).stopReason, "end_turn");
  // The interrupted turn was stored before close answered: the resumed turn's request carries it.
  assert.match(JSON.stringify(server.requests[1]!.body.messages), /talk a lot.*word .*turn interrupted.*still there\?/s);
  // And back: keen run continues the session the editor made.
  server.enqueue({ text: "From the terminal." });
  const run = await sb.run(["run", "--model", MODEL, "--session", sessionId, "and from the CLI?"]);
  assert.equal(run.code, 0, run.stderr);
  assert.match(JSON.stringify(server.requests[2]!.body.messages), /talk a lot.*still there\?.*Back again\..*and from the CLI\?/s);
  const shown = await sb.show(sessionId);
  assert.deepEqual(shown.events.filter((e) => e.kind === "text" && e.role === "user").map((e) => e.content), ["talk a lot", "still there?", "and from the CLI?"]);
});

test("session/set_mode changes the permission mode (auto runs bash unasked); unknown modes and options are invalid params; the model is a config option", async () => {
  const { sb, acp, ctx } = await shared();
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: "echo ran" } }] }, { text: "Done." }, { text: "From the other model." });
  const from = acp.permissions.length;
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: sb.workspace, mcpServers: [] });
  await ctx.request(methods.agent.session.setMode, { sessionId, modeId: "auto" });
  await assert.rejects(ctx.request(methods.agent.session.setMode, { sessionId, modeId: "yolo" }), (e: { code: number; message: string }) => e.code === -32602 && /unknown mode "yolo"/.test(e.message));
  assert.equal((await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "run it" }] })).stopReason, "end_turn");
  const changed = await ctx.request(methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "anthropic/claude-haiku-4-5" });
  const [model] = changed.configOptions;
  assert.equal(model?.type === "select" && model.currentValue, "anthropic/claude-haiku-4-5");
  await assert.rejects(ctx.request(methods.agent.session.setConfigOption, { sessionId, configId: "colour", value: "blue" }), (e: { code: number }) => e.code === -32602);
  await assert.rejects(ctx.request(methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "nosuchprovider/x" }), (e: { code: number }) => e.code === -32602);
  assert.equal((await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "again" }] })).stopReason, "end_turn");
  assert.equal(acp.permissions.length, from);
  assert.deepEqual(server.requests.map((r) => r.body.model), ["claude-test", "claude-test", "claude-haiku-4-5"]);
});

test("malformed input gets JSON-RPC errors and never ends the process", async () => {
  const { sb, acp, ctx } = await shared();
  server.enqueue({ text: "Still here." });
  const before = acp.raw.length;
  acp.child.stdin!.write([
    "this is not json",
    "[1, 2]",
    "42",
    JSON.stringify({ jsonrpc: "2.0", id: 901, method: "session/prompt", params: { sessionId: 5 } }),
    JSON.stringify({ jsonrpc: "2.0", id: 902, method: "no/such/method", params: {} }),
    JSON.stringify({ jsonrpc: "2.0", id: 903, method: "session/new", params: { cwd: join(sb.root, "missing-dir"), mcpServers: [] } }),
    JSON.stringify({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "nobody" } }),
  ].join("\n") + "\n");
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: sb.workspace, mcpServers: [] });
  await assert.rejects(ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "image", data: "AAAA", mimeType: "image/png" }] }),
    (e: { code: number; message: string }) => e.code === -32602 && /image/.test(e.message));
  // Keen's own code rides along in the JSON-RPC error's data.
  await assert.rejects(ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "   " }] }),
    (e: { code: number; data?: { error_code?: string } }) => e.code === -32602 && e.data?.error_code === "empty_prompt");
  const reply = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "are you alive?" }] });
  assert.equal(reply.stopReason, "end_turn");
  const errors = acp.raw.slice(before).map((line) => JSON.parse(line)).filter((m) => m.error).map((m) => [m.id, m.error.code]);
  // Parse errors come back in order; requests are handled concurrently, so their answers may not.
  assert.deepEqual(errors.slice(0, 3), [[null, -32700], [null, -32600], [null, -32600]]);
  assert.deepEqual(errors.slice(3, 6).sort(), [[901, -32602], [902, -32601], [903, -32602]]);
  const missing = acp.raw.slice(before).map((line) => JSON.parse(line)).find((m) => m.id === 903);
  assert.match(missing.error.message, /cwd .*missing-dir does not exist/);
});

test("the shared keen acp above ends with exit 0 when the editor closes stdin; its stdout carried JSON-RPC only", async () => {
  await acpShared.endsCleanly();
});

test("prompts: embedded resources and links reach the model as text; the step limit ends with max_turn_requests; a provider failure is an error the client can show", async () => {
  const { sb, acp } = open(["--max-turns", "2", "--permission-mode", "auto"]);
  server.enqueue(
    { toolCalls: [{ name: "list", input: {} }] }, { text: "Summary at the limit." },
    { kind: "http-error", status: 400, body: { type: "error", error: { type: "invalid_request_error", message: "prompt is too long" } } },
  );
  await acp.run(async (ctx) => {
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: sb.workspace, mcpServers: [] });
    const reply = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [
      { type: "text", text: "look at" },
      { type: "resource_link", name: "main.ts", uri: `file://${sb.workspace}/main.ts` },
      { type: "resource", resource: { uri: `file://${sb.workspace}/notes.md`, text: "remember the milk" } },
    ] });
    assert.equal(reply.stopReason, "max_turn_requests");
    await assert.rejects(ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "more" }] }),
      (e: { code: number; message: string }) => e.code === -32603 && /prompt is too long/.test(e.message));
    const { sessions } = await ctx.request(methods.agent.session.list, { cwd: sb.workspace });
    assert.deepEqual(sessions.map((s) => [s.sessionId, s.cwd, s.title]), [[sessionId, sb.workspace, "look at"]]);
  });
  assert.equal((await acp.exited).code, 0, acp.stderr());
  const first = JSON.stringify(server.requests[0]!.body.messages[0]);
  assert.ok(first.includes(`[main.ts](${sb.workspace}/main.ts)`), first);
  assert.ok(first.includes(`<context uri=\\"${sb.workspace}/notes.md\\">\\nremember the milk\\n</context>`), first);
});

test("SIGTERM mid-turn: the turn is interrupted and stored, the process exits 143", async () => {
  const { sb, acp } = open();
  server.enqueue({ text: "word ".repeat(400), delayMs: 25, chunkSize: 5 });
  let sessionId = "";
  const finished = acp.run(async (ctx) => {
    ({ sessionId } = await ctx.request(methods.agent.session.new, { cwd: sb.workspace, mcpServers: [] }));
    const pending = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "talk a lot" }] });
    await acp.waitFor((n) => n.update.sessionUpdate === "agent_message_chunk");
    acp.child.kill("SIGTERM");
    // The connection closes before the turn can answer; the prompt settles either way.
    await pending.catch(() => undefined);
  }).catch(() => undefined);
  const { code } = await acp.exited;
  await finished;
  assert.equal(code, 143, acp.stderr());
  const shown = await sb.show(sessionId);
  assert.equal(shown.session.status, "interrupted");
  assert.ok(shown.events.some((e) => e.kind === "text" && e.role === "user" && e.content === "talk a lot"));
});
