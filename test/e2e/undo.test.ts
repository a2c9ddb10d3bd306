import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox } from "./harness.js";
import { startStdio } from "./stdio-client.js";

const server = useMockLLMServer();

const turnThatEdits = () =>
  server.enqueue(
    { toolCalls: [
      { id: "w", name: "write_file", input: { path: "new.txt", content: "created\n" } },
      { id: "e", name: "edit_file", input: { path: "a.txt", old_string: "one", new_string: "ONE" } },
      { id: "e2", name: "edit_file", input: { path: "a.txt", old_string: "two", new_string: "TWO" } },
    ] },
    { text: "done" },
  );

test("undo: says what it will restore, then restores the last turn's edits and removes what it created", async () => {
  const sb = makeSandbox(server.url);
  writeFileSync(join(sb.workspace, "a.txt"), "one\r\ntwo\r\n");
  const client = startStdio(["--model", "anthropic/claude-test", "--permission-mode", "auto"], sb.env, sb.workspace);
  client.send({ kind: "undo", id: "early" });
  assert.match((await client.response("early")).error, /nothing to undo/);
  turnThatEdits();
  client.send({ kind: "prompt", id: "p", text: "edit" });
  await client.response("p");
  assert.equal(readFileSync(join(sb.workspace, "a.txt"), "utf8"), "ONE\r\nTWO\r\n");

  client.send({ kind: "undo", id: "plan" });
  const plan = await client.response("plan");
  assert.deepEqual(plan.data, {
    files: [{ path: join(sb.workspace, "new.txt"), action: "remove" }, { path: join(sb.workspace, "a.txt"), action: "restore" }],
    restored: false,
    to: 1,
  });
  assert.ok(existsSync(join(sb.workspace, "new.txt")), "the plan changes nothing");
  client.send({ kind: "undo", id: "do", confirm: true });
  assert.equal((await client.response("do")).data.restored, true);
  assert.equal(readFileSync(join(sb.workspace, "a.txt"), "utf8"), "one\r\ntwo\r\n", "bytes before the turn, CRLF kept");
  assert.equal(existsSync(join(sb.workspace, "new.txt")), false);
  assert.equal((await client.end()).code, 0);
});

test("undo refuses, and restores nothing, when a file changed since the turn", async () => {
  const sb = makeSandbox(server.url);
  writeFileSync(join(sb.workspace, "a.txt"), "one\ntwo\n");
  const client = startStdio(["--model", "anthropic/claude-test", "--permission-mode", "auto"], sb.env, sb.workspace);
  turnThatEdits();
  client.send({ kind: "prompt", id: "p", text: "edit" });
  await client.response("p");
  writeFileSync(join(sb.workspace, "a.txt"), "ONE\nTWO\nmine\n");
  client.send({ kind: "undo", id: "do", confirm: true });
  const refused = await client.response("do");
  assert.equal(refused.ok, false);
  assert.match(refused.error, /a\.txt changed since the turn/);
  assert.ok(existsSync(join(sb.workspace, "new.txt")), "nothing restored, not even the unchanged file");
  assert.equal(readFileSync(join(sb.workspace, "a.txt"), "utf8"), "ONE\nTWO\nmine\n");
  assert.equal((await client.end()).code, 0);
});
