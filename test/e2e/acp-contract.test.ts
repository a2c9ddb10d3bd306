/**
 * What an integrator relies on in `keen acp` (issue 30, items 7–9), through the
 * real process and the SDK's own client: permission requests show the native
 * diff, bad `cwd`s and models are invalid params, and Keen tells the editor
 * its commands and mode changes (and serves the commands sent as prompts).
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { methods, type ClientContext, type SessionNotification, type ToolCallUpdate } from "@agentclientprotocol/sdk";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { chunkText, openAcp, sharedAcp } from "./acp-client.js";
import { loadAcpSchema } from "./acp-schema.js";

const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();
const open = (args: string[] = [], config: Record<string, unknown> = {}) => openAcp(server.url, ["--model", MODEL, ...args], config);

type Update = SessionNotification["update"];
const finished = (updates: SessionNotification[]) =>
  updates.map((n) => n.update).filter((u): u is Extract<Update, { sessionUpdate: "tool_call_update" }> =>
    u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed"));
/*
 * Tests that need no flags, config or client capabilities of their own share one `keen acp`, each in
 * a session of its own (and a directory of its own where it writes files), as an editor keeps one
 * agent process for many sessions; a process costs ~0.7 s of CPU to start. The last of them checks
 * that this process exits 0 on EOF. Updates and permission requests are told apart by session id.
 */
const acpShared = sharedAcp(() => server.url, ["--model", MODEL]);
const shared = acpShared.get;

/** Prompts `sessionId` through the shared agent: where the turn's updates start, and the text it said. */
function prompter({ acp, ctx }: Pick<Awaited<ReturnType<typeof shared>>, "acp" | "ctx">, sessionId: string) {
  return async (text: string) => {
    const from = acp.updates.length;
    const { stopReason } = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
    assert.equal(stopReason, "end_turn");
    return { from, text: said(acp.updates, from) };
  };
}
after(acpShared.kill);
/** A fresh directory for one shared test's session. */
const dirFor = (sb: { root: string }, name: string) => {
  const dir = join(sb.root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
};
const ofSession = (updates: SessionNotification[], sessionId: string) => updates.filter((n) => n.sessionId === sessionId);
/** The agent's message chunks from update `from` on. */
const said = (updates: SessionNotification[], from: number) => chunkText(updates.slice(from), "agent_message_chunk");

test("a permission request shows the change as the finished call does: a diff item with the whole old and new text; past 128 KiB the unified diff", async () => {
  const { sb, acp, ctx } = await shared();
  const cwd = dirFor(sb, "diffs");
  const app = join(cwd, "app.txt");
  const big = join(cwd, "big.txt");
  writeFileSync(app, "alpha\nbeta\n");
  writeFileSync(big, Array.from({ length: 9000 }, (_, i) => `line ${i}`).join("\n") + "\n");
  server.enqueue(
    { toolCalls: [{ name: "write_file", input: { path: "notes.txt", content: "one\ntwo\n" } }] },
    { toolCalls: [{ name: "edit_file", input: { path: "app.txt", old_string: "beta", new_string: "gamma" } }] },
    { toolCalls: [{ name: "edit_file", input: { path: "big.txt", old_string: "line 4321\n", new_string: "LINE 4321\n" } }] },
    { text: "Done." },
  );
  const from = acp.permissions.length;
  acp.answer("allow-once", "allow-once", "allow-once");
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  assert.equal((await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "change things" }] })).stopReason, "end_turn");
  const asked = acp.permissions.slice(from).map((p) => (p.toolCall as ToolCallUpdate).content);
  assert.deepEqual(asked.slice(0, 2), [
    [{ type: "diff", path: join(cwd, "notes.txt"), oldText: null, newText: "one\ntwo\n" }],
    [{ type: "diff", path: app, oldText: "alpha\nbeta\n", newText: "alpha\ngamma\n" }],
  ]);
  const large = JSON.stringify(asked[2]);
  assert.match(large, /```diff\\n.*-line 4321\\n\+LINE 4321/, large.slice(0, 300));
  assert.doesNotMatch(large, /"type":"diff"/);
  // Each prompt showed what the finished call then showed.
  assert.deepEqual(asked, finished(ofSession(acp.updates, sessionId)).map((u) => u.content));
});

test("session/new with a relative, missing or non-directory cwd, or none, is invalid params with a message; so is a model set_config_option did not offer", async () => {
  const { sb, acp, ctx } = await shared();
  server.enqueue({ text: "Fine." });
  const invalid = (pattern: RegExp) => (e: { code: number; message: string }) => e.code === -32602 && pattern.test(e.message);
  const create = (cwd: string) => ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  await assert.rejects(create("ws"), invalid(/cwd must be an absolute path, not "ws"/));
  await assert.rejects(create(join(sb.root, "nowhere")), invalid(/cwd .*nowhere does not exist/));
  writeFileSync(join(sb.root, "plain.txt"), "");
  await assert.rejects(create(join(sb.root, "plain.txt")), invalid(/plain\.txt is not a directory/));
  await assert.rejects(ctx.request(methods.agent.session.load, { sessionId: "x", cwd: "ws", mcpServers: [] }), invalid(/absolute/));
  // No cwd at all: the SDK's own params check answers.
  const before = acp.raw.length;
  acp.child.stdin!.write(JSON.stringify({ jsonrpc: "2.0", id: 911, method: "session/new", params: { mcpServers: [] } }) + "\n");
  const { sessionId } = await create(sb.workspace);
  const missing = acp.raw.slice(before).map((line) => JSON.parse(line)).find((m) => m.id === 911);
  assert.equal(missing?.error?.code, -32602, JSON.stringify(missing));

  await assert.rejects(
    ctx.request(methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "anthropic/claude-unlisted" }),
    invalid(/model "anthropic\/claude-unlisted" is not among the options: anthropic\/claude-test, /),
  );
  // The refused model changed nothing.
  assert.equal((await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] })).stopReason, "end_turn");
  assert.deepEqual(server.requests.map((r) => r.body.model), ["claude-test"]);
  assert.doesNotMatch(acp.stderr(), /\n\s+at /, "no stack traces");
});

test("available_commands_update follows session/new: compact, undo, mode and kill-job; undo is not offered where the editor owns the files", async () => {
  /** The commands sent after a new session's answer; the session was known to the client before its commands arrived. */
  const commandsIn = async (acp: ReturnType<typeof open>["acp"], ctx: ClientContext, cwd: string) => {
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
    const { update } = await acp.waitFor((n) => n.sessionId === sessionId && n.update.sessionUpdate === "available_commands_update");
    const lines = acp.raw.map((line) => JSON.parse(line));
    const answered = lines.findIndex((m) => m.result?.sessionId === sessionId);
    assert.ok(answered >= 0 && answered < lines.findIndex((m) => m.params?.sessionId === sessionId && m.params?.update?.sessionUpdate === "available_commands_update"));
    return update.sessionUpdate === "available_commands_update" ? update.availableCommands : [];
  };
  // Without fs: in the shared process (the default flags; its exit is checked at the end). With fs: a
  // process of its own, as capabilities are the client's, given once at initialize.
  const one = await shared();
  const plain = await commandsIn(one.acp, one.ctx, dirFor(one.sb, "available"));
  assert.deepEqual(plain.map((c) => [c.name, c.input?.hint]), [
    ["compact", "what the summary should keep (optional)"],
    ["undo", undefined],
    ["mode", "ask | accept-edits | auto | read-only"],
    ["kill-job", "its id, as its tool call's title shows it (job-1)"],
  ]);
  assert.ok(plain.every((c) => c.description.length > 10));
  const { sb, acp } = open();
  const withFs = await acp.run((ctx) => commandsIn(acp, ctx, sb.workspace), { fs: { readTextFile: true, writeTextFile: true } });
  assert.equal((await acp.exited).code, 0, acp.stderr());
  assert.deepEqual(withFs.map((c) => c.name), ["compact", "mode", "kill-job"]);
});

test("/mode, /undo and unknown /words sent as prompts: the mode change reaches the editor as current_mode_update, undo shows then reverts the last turn, other words go to the model", async () => {
  const { sb, acp, ctx } = await shared();
  const cwd = dirFor(sb, "commands");
  const notes = join(cwd, "notes.txt");
  const asked = acp.permissions.length;
  server.enqueue(
    { toolCalls: [{ name: "write_file", input: { path: "notes.txt", content: "one\n" } }] }, { text: "Wrote it." },
    { text: "No such command here." },
  );
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  const prompt = prompter({ acp, ctx }, sessionId);
  const mode = await prompt("/mode auto");
  assert.equal(mode.text, "Permission mode: auto.");
  assert.ok(acp.updates.slice(mode.from).some((n) => n.update.sessionUpdate === "current_mode_update" && n.update.currentModeId === "auto"));
  // Auto: the write runs unasked.
  await prompt("write notes");
  assert.ok(existsSync(notes));
  assert.equal((await prompt("/undo")).text, `/undo will remove ${notes}. Send /undo again to do it.`);
  assert.ok(existsSync(notes), "the first /undo only shows");
  assert.equal((await prompt("/undo")).text, `Undone: remove ${notes}.`);
  assert.equal(existsSync(notes), false);
  assert.match((await prompt("/undo")).text, /^Nothing was undone: /);
  const refused = await prompt("/mode yolo");
  assert.match(refused.text, /^The mode stays auto: unknown mode "yolo"/);
  assert.equal((await prompt("/mode")).text, "The permission mode is auto (modes: ask, accept-edits, auto, read-only).");
  await prompt("/frobnicate now");
  assert.ok(!acp.updates.slice(refused.from).some((n) => n.update.sessionUpdate === "current_mode_update"));
  // The editor's own set_mode is not echoed back.
  const before = acp.updates.length;
  await ctx.request(methods.agent.session.setMode, { sessionId, modeId: "ask" });
  assert.equal((await prompt("/mode")).text, "The permission mode is ask (modes: ask, accept-edits, auto, read-only).");
  assert.ok(!acp.updates.slice(before).some((n) => n.update.sessionUpdate === "current_mode_update"));
  assert.equal(acp.permissions.length, asked);
  // Only the turn and the unknown word reached the model; the commands did not.
  assert.equal(server.requests.length, 3);
  assert.match(JSON.stringify(server.requests[2]!.body.messages.at(-1)), /\/frobnicate now/);
  assert.deepEqual(server.unexpected, []);
});

test("a background job is an execute tool call in progress after its turn; /kill-job ends it (completed), and says so when it has ended already", async () => {
  const { sb, acp, ctx } = await shared();
  const cwd = dirFor(sb, "jobs");
  const marker = `${process.pid}${Date.now() % 100000}`;
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: `exec sleep 300.${marker}`, background: true } }] }, { text: "Started it." });
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  const prompt = prompter({ acp, ctx }, sessionId);
  await prompt("/mode auto");
  const turn = await prompt("start the server");
  const job = (from: number) => ofSession(acp.updates.slice(from), sessionId).map((n) => n.update).filter((u) => "toolCallId" in u && u.toolCallId === "job:job-1");
  assert.deepEqual(job(turn.from).map((u) => [u.sessionUpdate, "status" in u && u.status, "kind" in u && u.kind]), [["tool_call", "in_progress", "execute"]]);
  assert.equal((job(turn.from)[0] as { title: string }).title, `exec sleep 300.${marker} (background job-1)`);
  const kill = await prompt("/kill-job 1");
  assert.equal(kill.text, "Killed job-1.");
  assert.deepEqual(job(kill.from).map((u) => [u.sessionUpdate, "status" in u && u.status]), [["tool_call_update", "completed"]]);
  assert.match((await prompt("/kill-job job-1")).text, /^Not killed: job-1 has already been killed\.$/);
  assert.equal((await prompt("/kill-job")).text, "Which job? Send /kill-job with its id, as its tool call's title shows it (e.g. /kill-job job-1).");
  assert.deepEqual(server.unexpected, []);
  // The job's updates are valid session/update notifications for the ACP SDK's schema.
  const jobLines = acp.raw.filter((line) => line.includes('"toolCallId":"job:job-1"')).map((line) => ({ from: "agent" as const, line }));
  assert.equal(jobLines.length, 2);
  assert.deepEqual(loadAcpSchema().problems(jobLines), []);
});

test("/compact sent as a prompt compacts the conversation with the given instructions; the next turn starts from the summary", async () => {
  const { sb, acp } = open([], { compaction: { keepTokens: 10 } });
  const long = (tag: string) => `${tag} ${"lorem ipsum dolor ".repeat(60)}`;
  server.enqueue({ text: "first answer" }, { text: "second answer" }, { text: "MANUAL SUMMARY" }, { text: "after" });
  await acp.run(async (ctx) => {
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: sb.workspace, mcpServers: [] });
    const prompt = async (text: string) => {
      const from = acp.updates.length;
      const { stopReason } = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
      assert.equal(stopReason, "end_turn");
      return said(acp.updates, from);
    };
    assert.match(await prompt("/compact"), /Not compacted: the session has no conversation to compact yet\.$/);
    await prompt(long("prompt-1"));
    await prompt(long("prompt-2"));
    assert.match(await prompt("/compact keep the lorem"), /^Compacting the conversation…\nCompacted: about \d+ tokens of conversation are now \d+\.$/);
    assert.match(JSON.stringify(server.requests.at(-1)!.body), /keep the lorem/);
    await prompt("next");
  });
  assert.equal((await acp.exited).code, 0, acp.stderr());
  const sent = JSON.stringify(server.requests.at(-1)!.body.messages);
  assert.match(sent, /MANUAL SUMMARY/);
  assert.doesNotMatch(sent, /prompt-1 /);
  assert.equal(server.requests.length, 4);
});

test("custom commands (.keen/commands) follow Keen's in available_commands_update, and /name args runs the command", async () => {
  const { sb, acp, ctx } = await shared();
  const cwd = dirFor(sb, "custom");
  mkdirSync(join(cwd, ".keen", "commands"), { recursive: true });
  writeFileSync(join(cwd, ".keen", "commands", "greet.md"), "---\ndescription: Greet someone\nargument-hint: <name>\n---\nSay hello to $1.\n");
  server.enqueue({ text: "Hello, Ada." });
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  const { update } = await acp.waitFor((n) => n.sessionId === sessionId && n.update.sessionUpdate === "available_commands_update");
  await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "/greet Ada" }] });
  const listed = update.sessionUpdate === "available_commands_update" ? update.availableCommands : [];
  assert.deepEqual(listed.map((c) => [c.name, c.input?.hint]).slice(-1), [["greet", "<name>"]]);
  assert.match(JSON.stringify(server.requests.at(-1)!.body.messages), /Say hello to Ada\./);
});

test("the shared keen acp above ends with exit 0 when the editor closes stdin; its stdout carried JSON-RPC only", async () => {
  await acpShared.endsCleanly();
});
