import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { methods, type SessionNotification, type ToolCallUpdate } from "@agentclientprotocol/sdk";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { openAcp, sharedAcp } from "./acp-client.js";

const MODEL = "anthropic/claude-test";
const READ = methods.client.fs.readTextFile;
const WRITE = methods.client.fs.writeTextFile;
const server = useMockLLMServer();
const open = (args: string[] = []) => openAcp(server.url, ["--model", MODEL, ...args]);

/*
 * The two tests of a client with both fs capabilities and the default flags share one `keen acp` (a
 * process costs ~0.7 s of CPU to start), each in a session of its own; the last checks it exits 0.
 */
const withFs = sharedAcp(() => server.url, ["--model", MODEL], { fs: { readTextFile: true, writeTextFile: true } });
after(withFs.kill);

/** The finished tool calls' updates, in order. */
const finished = (updates: SessionNotification[]) =>
  updates.map((n) => n.update).filter((u): u is Extract<typeof u, { sessionUpdate: "tool_call_update" }> =>
    u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed"));

/** What the model was sent as the results of the previous step's tool calls. */
const toolResults = (request: number) => JSON.stringify(server.requests[request]!.body.messages.at(-1));

test("a client with fs: reads see its unsaved buffer, writes and edits land in it and not on disk, diffs and permission previews come from it; guarded paths never reach it", async () => {
  const { sb, acp, ctx } = await withFs.get();
  const fsFrom = acp.fsRequests.length;
  const asked = acp.permissions.length;
  const app = join(sb.workspace, "app.txt");
  writeFileSync(app, "alpha\nbeta\n");
  acp.buffers.set(app, "alpha\nbeta\nunsaved line\n");
  const key = join(sb.env.HOME!, ".ssh", "id_rsa");
  mkdirSync(join(sb.env.HOME!, ".ssh"), { recursive: true });
  writeFileSync(key, "DISK PRIVATE KEY\n");
  const config = join(sb.home, "config.json");
  // Were the guard skipped, the editor would hand these over.
  acp.buffers.set(key, "BUFFER PRIVATE KEY\n");
  acp.buffers.set(config, '{"buffer": "config"}');
  server.enqueue(
    { toolCalls: [{ name: "read_file", input: { path: "app.txt" } }] },
    { toolCalls: [{ name: "edit_file", input: { path: "app.txt", old_string: "beta", new_string: "gamma" } }] },
    { toolCalls: [{ name: "write_file", input: { path: "notes/new.txt", content: "fresh\n" } }] },
    { toolCalls: [
      { name: "read_file", input: { path: "~/.ssh/id_rsa" } },
      { name: "read_file", input: { path: config } },
      { name: "write_file", input: { path: config, content: "{}" } },
    ] },
    { text: "Done." },
  );
  acp.answer("allow-once", "allow-once", "allow-once");
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: sb.workspace, mcpServers: [] });
  const reply = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "fix app.txt" }] });
  assert.equal(reply.stopReason, "end_turn");

  const newFile = join(sb.workspace, "notes", "new.txt");
  assert.deepEqual(acp.fsRequests.slice(fsFrom), [
    [READ, app], // read_file
    [READ, app], // the edit's permission preview
    [READ, app], [WRITE, app], // the edit
    [WRITE, newFile], // a new file: nothing to read
  ]);
  // The model read the buffer, not the disk.
  assert.match(toolResults(1), /unsaved line/);
  // The edit was made on the buffer and landed in the editor; the disk is as it was.
  assert.equal(acp.buffers.get(app), "alpha\ngamma\nunsaved line\n");
  assert.equal(readFileSync(app, "utf8"), "alpha\nbeta\n");
  assert.equal(acp.buffers.get(newFile), "fresh\n");
  assert.equal(existsSync(newFile), false);
  const [, edit, write, ...refused] = finished(acp.updates.filter((n) => n.sessionId === sessionId));
  assert.deepEqual(edit!.content, [{ type: "diff", path: app, oldText: "alpha\nbeta\nunsaved line\n", newText: "alpha\ngamma\nunsaved line\n" }]);
  assert.deepEqual(write!.content, [{ type: "diff", path: newFile, oldText: null, newText: "fresh\n" }]);
  // The permission prompt for the edit showed the change to the buffer, as the finished call does.
  assert.deepEqual(acp.permissions.slice(asked, asked + 2).map((p) => (p.toolCall as ToolCallUpdate).content), [edit!.content, write!.content]);
  // The key and Keen's config: refused by the guard before the editor was asked.
  assert.deepEqual(refused.map((u) => u.status), ["failed", "failed", "failed"]);
  const results = toolResults(4);
  assert.equal(results.match(/Refused: [^"]*(credential file|Keen's own config)/g)?.length, 3, results);
  assert.doesNotMatch(results, /PRIVATE KEY|buffer/);
  assert.equal(JSON.parse(readFileSync(config, "utf8")).stdinGraceMs, 300, "the config file is untouched");
  assert.deepEqual(server.unexpected, []);
});

test("a client that only reads: read_file sees its buffer, edits are planned on and written to the disk; a failing editor read is an error for the model", async () => {
  const { sb, acp } = open(["--permission-mode", "auto"]);
  const app = join(sb.workspace, "app.txt");
  const broken = join(sb.workspace, "broken.txt");
  writeFileSync(app, "alpha\nbeta\n");
  writeFileSync(broken, "on disk\n");
  acp.buffers.set(app, "alpha\nbeta\nunsaved\n");
  acp.failing.add(broken);
  server.enqueue(
    { toolCalls: [{ name: "edit_file", input: { path: "app.txt", old_string: "beta", new_string: "gamma" } }] },
    { toolCalls: [{ name: "read_file", input: { path: "broken.txt" } }] },
    { text: "Done." },
  );
  await acp.run(async (ctx) => {
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: sb.workspace, mcpServers: [] });
    assert.equal((await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] })).stopReason, "end_turn");
  }, { fs: { readTextFile: true } });
  assert.equal((await acp.exited).code, 0, acp.stderr());
  assert.equal(readFileSync(app, "utf8"), "alpha\ngamma\n");
  assert.equal(acp.buffers.get(app), "alpha\nbeta\nunsaved\n");
  assert.deepEqual(acp.fsRequests, [[READ, broken]]);
  const [edit, read] = finished(acp.updates);
  assert.deepEqual(edit!.content, [{ type: "diff", path: app, oldText: "alpha\nbeta\n", newText: "alpha\ngamma\n" }]);
  assert.equal(read!.status, "failed");
  assert.match(toolResults(2), /Cannot read broken\.txt through the editor: Resource not found/);
});

test("session/cancel while the editor has not answered a read: the read is withdrawn and the prompt answers cancelled", async () => {
  const { sb, acp, ctx } = await withFs.get();
  const fsFrom = acp.fsRequests.length;
  const cwd = join(sb.root, "cancel");
  mkdirSync(cwd);
  const slow = join(cwd, "slow.txt");
  writeFileSync(slow, "on disk\n");
  const arrived = acp.stall(slow);
  server.enqueue({ toolCalls: [{ name: "read_file", input: { path: "slow.txt" } }] }, { text: "Next." });
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
  const pending = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "read it" }] });
  await arrived;
  await ctx.notify(methods.agent.session.cancel, { sessionId });
  assert.equal((await pending).stopReason, "cancelled");
  assert.equal((await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "again" }] })).stopReason, "end_turn");
  assert.deepEqual(acp.fsRequests.slice(fsFrom), [[READ, slow]]);
  await withFs.endsCleanly();
});
