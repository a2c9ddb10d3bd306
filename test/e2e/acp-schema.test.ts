/**
 * `keen acp` against the ACP schema of the SDK version Keen pins (issue 30,
 * item 10): every JSON-RPC message of two sessions that use every method Keen
 * serves and every update it sends, both ways, is checked against the SDK's
 * schema/v1/schema.json (test/e2e/acp-schema.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { methods } from "@agentclientprotocol/sdk";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { openAcp, type AcpClient } from "./acp-client.js";
import { loadAcpSchema, type WireLine } from "./acp-schema.js";

const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();

const wire = (acp: AcpClient): WireLine[] => [
  ...acp.sent.map((line) => ({ from: "client" as const, line })),
  ...acp.raw.map((line) => ({ from: "agent" as const, line })),
];

test("every message of a full editor session, both ways, fits the SDK's ACP schema", async () => {
  const schema = loadAcpSchema();

  // An editor without fs: permissions, modes, config, list, commands, cancel, close, resume, load, errors.
  const { sb, acp } = openAcp(server.url, ["--model", MODEL], { compaction: { keepTokens: 10 } });
  server.enqueue(
    { thinking: "Plan.", text: "Writing.", toolCalls: [{ name: "write_file", input: { path: "notes.txt", content: "one\n" } }] },
    { toolCalls: [{ name: "bash", input: { command: "echo hello; sleep 0.3; echo world" } }] },
    { text: "Done." },
    { toolCalls: [{ name: "edit_file", input: { path: "notes.txt", old_string: "one", new_string: "two" } }] }, { text: "Not run." },
    { text: "SUMMARY" },
    { text: "word ".repeat(400), delayMs: 25, chunkSize: 5 },
    { text: "Back." },
  );
  acp.answer("allow-once", "allow-always", "cancelled");
  await acp.run(async (ctx) => {
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: sb.workspace, mcpServers: [] });
    const prompt = (text: string) => ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
    assert.equal((await prompt("take notes")).stopReason, "end_turn");
    await ctx.request(methods.agent.session.setMode, { sessionId, modeId: "ask" });
    await ctx.request(methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "anthropic/claude-haiku-4-5" });
    await assert.rejects(ctx.request(methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "x/y" }));
    // The edit asks; the client answers cancelled.
    assert.equal((await prompt("again")).stopReason, "end_turn");
    await ctx.request(methods.agent.session.list, { cwd: sb.workspace });
    assert.equal((await prompt("/undo")).stopReason, "end_turn");
    assert.equal((await prompt("/mode auto")).stopReason, "end_turn");
    assert.equal((await prompt("/compact")).stopReason, "end_turn");
    const pending = prompt("talk a lot");
    await acp.waitFor((n) => n.update.sessionUpdate === "agent_message_chunk" && n.update.content.type === "text" && n.update.content.text.startsWith("word"));
    await ctx.notify(methods.agent.session.cancel, { sessionId });
    assert.equal((await pending).stopReason, "cancelled");
    await ctx.request(methods.agent.session.close, { sessionId });
    await ctx.request(methods.agent.session.resume, { sessionId, cwd: sb.workspace, mcpServers: [] });
    await ctx.request(methods.agent.session.close, { sessionId });
    await ctx.request(methods.agent.session.load, { sessionId, cwd: sb.workspace, mcpServers: [] });
    assert.equal((await prompt("back?")).stopReason, "end_turn");
    await assert.rejects(ctx.request(methods.agent.session.prompt, { sessionId: "nobody", prompt: [{ type: "text", text: "hi" }] }));
    await assert.rejects(ctx.request(methods.agent.session.new, { cwd: "relative", mcpServers: [] }));
  });
  assert.equal((await acp.exited).code, 0, acp.stderr());

  // An editor with fs: its files are read and written through it.
  const fsed = openAcp(server.url, ["--model", MODEL]);
  writeFileSync(join(fsed.sb.workspace, "app.txt"), "alpha\nbeta\n");
  server.enqueue(
    { toolCalls: [{ name: "read_file", input: { path: "app.txt" } }] },
    { toolCalls: [{ name: "edit_file", input: { path: "app.txt", old_string: "beta", new_string: "gamma" } }] },
    { text: "Edited." },
  );
  fsed.acp.answer("allow-once");
  await fsed.acp.run(async (ctx) => {
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: fsed.sb.workspace, mcpServers: [] });
    assert.equal((await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "fix it" }] })).stopReason, "end_turn");
  }, { fs: { readTextFile: true, writeTextFile: true } });
  assert.equal((await fsed.acp.exited).code, 0, fsed.acp.stderr());

  const lines = [wire(acp), wire(fsed.acp)];
  assert.deepEqual(lines.flatMap((conversation) => schema.problems(conversation)), []);

  // What was checked covers every method and update kind Keen uses.
  const messages = lines.flat().map(({ line }) => JSON.parse(line));
  const seen = new Set(messages.flatMap((m) => (m.method ? [m.method] : [])));
  assert.deepEqual([
    "initialize", "session/new", "session/prompt", "session/cancel", "session/set_mode", "session/set_config_option", "session/list",
    "session/close", "session/resume", "session/load", "session/update", "session/request_permission", "fs/read_text_file", "fs/write_text_file",
  ].filter((method) => !seen.has(method)), []);
  const kinds = new Set(messages.flatMap((m) => (m.method === "session/update" ? [m.params.update.sessionUpdate] : [])));
  assert.deepEqual([
    "agent_message_chunk", "agent_thought_chunk", "user_message_chunk", "tool_call", "tool_call_update", "available_commands_update", "current_mode_update",
  ].filter((kind) => !kinds.has(kind)), []);
  assert.ok(messages.some((m) => m.error), "error responses were checked too");
  const outcomes = new Set(messages.flatMap((m) => (m.result?.outcome ? [m.result.outcome.outcome] : [])));
  assert.deepEqual([...outcomes].sort(), ["cancelled", "selected"]);

  // The check can fail: one changed field in a recorded update is found.
  const broken = wire(fsed.acp).map((entry) => ({ ...entry, line: entry.line.replace('"type":"diff"', '"type":"patch"') }));
  assert.equal(schema.problems(broken).length > 0, true);
});
