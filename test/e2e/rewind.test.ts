import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox } from "./harness.js";
import { runScript, startStdio, type StdioClient } from "./stdio-client.js";

/*
 * Rewind and fork over `keen stdio` (docs/PROTOCOL.md, "Rewind and fork"), in a git workspace with the sandbox
 * at its default: the files go back through the guard, the model's next request holds the rewound history, and
 * another process resuming the session (or its fork) sees the same.
 */
const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();

/** The text of each user message of a recorded request, context blocks left out, in order. */
function userTexts(body: any): string[] {
  return body.messages.filter((m: any) => m.role === "user").map((m: any) =>
    typeof m.content === "string" ? m.content : m.content.filter((b: any) => b.type === "text" && !/^<(user_shell_command|files_reverted)>/.test(b.text)).map((b: any) => b.text).join(""));
}
const lastRequest = () => server.requests.at(-1)!.body;

function gitWorkspace(sb: { workspace: string }) {
  execFileSync("git", ["init", "-q"], { cwd: sb.workspace });
  writeFileSync(join(sb.workspace, "a.txt"), "v0\n");
}

async function prompt(client: StdioClient, id: string, text: string) {
  client.send({ kind: "prompt", id, text });
  const answer = await client.response(id);
  assert.equal(answer.ok, true, answer.error);
  return answer;
}

/** Three turns: 1 writes a.txt v1, 2 edits it to v2 and creates b.txt, 3 writes a.txt v3. */
async function threeTurns(client: StdioClient, ids = "") {
  server.enqueue({ toolCalls: [{ id: "w1", name: "write_file", input: { path: "a.txt", content: "v1\n" } }] }, { text: "one done" });
  await prompt(client, `${ids}p1`, "one");
  server.enqueue(
    { toolCalls: [
      { id: "e2", name: "edit_file", input: { path: "a.txt", old_string: "v1", new_string: "v2" } },
      { id: "w2", name: "write_file", input: { path: "b.txt", content: "new\n" } },
    ] },
    { text: "two done" },
  );
  await prompt(client, `${ids}p2`, "two");
  server.enqueue({ toolCalls: [{ id: "w3", name: "write_file", input: { path: "a.txt", content: "v3\n" } }] }, { text: "three done" });
  return prompt(client, `${ids}p3`, "three");
}

test("rewind two levels with the files, then once without them; the next request and a resume from another process hold the rewound history", async () => {
  const sb = makeSandbox(server.url);
  gitWorkspace(sb);
  const a = join(sb.workspace, "a.txt");
  const b = join(sb.workspace, "b.txt");
  const client = startStdio(["--model", MODEL, "--permission-mode", "auto"], sb.env, sb.workspace, 90_000);
  const session = (await threeTurns(client)).data.session_id;
  assert.equal(readFileSync(a, "utf8"), "v3\n");

  client.send({ kind: "list-checkpoints", id: "l1" });
  const listed = (await client.response("l1")).data;
  assert.deepEqual(listed.checkpoints.map((c: any) => [c.index, c.text, c.files]), [[1, "one", [a, b]], [2, "two", [a, b]], [3, "three", [a]]]);

  client.send({ kind: "rewind", id: "r3", to: 3, files: true });
  const event = await client.next((l) => l.kind === "rewind");
  assert.deepEqual([event.to, event.text, event.conversation, event.files], [3, "three", true, [{ path: a, action: "restored" }]]);
  assert.deepEqual((await client.response("r3")).data, { session_id: session, to: 3, text: "three", files: [{ path: a, action: "restored" }] });
  assert.equal(readFileSync(a, "utf8"), "v2\n");

  client.send({ kind: "rewind", id: "r2", to: 2, files: true });
  assert.deepEqual((await client.response("r2")).data.files, [{ path: a, action: "restored" }, { path: b, action: "deleted" }]);
  assert.equal(readFileSync(a, "utf8"), "v1\n");
  assert.equal(existsSync(b), false, "the file turn 2 created is gone");

  server.enqueue({ text: "two again done" });
  await prompt(client, "p4", "two, differently");
  assert.deepEqual(userTexts(lastRequest()), ["one", "two, differently"], "the rewound turns left the model's history");

  // Without files: the conversation goes back, the files stay as they are.
  client.send({ kind: "rewind", id: "r2b", to: 2 });
  assert.deepEqual((await client.response("r2b")).data, { session_id: session, to: 2, text: "two, differently", files: [] });
  assert.equal(readFileSync(a, "utf8"), "v1\n");
  client.send({ kind: "list-checkpoints", id: "l2" });
  assert.deepEqual((await client.response("l2")).data.checkpoints.map((c: any) => c.text), ["one"]);
  assert.equal((await client.end()).code, 0);

  // Another process resumes it: replay and the model's history are the rewound state; the log keeps every turn.
  server.enqueue({ text: "resumed" });
  // --sandbox off for the other processes: their turns only talk (a turn with bash available warms the sandbox).
  const resumed = await runScript(sb.run, ["--model", MODEL, "--sandbox", "off"], [
    { kind: "resume-session", id: "rs", session, replay: true },
    { kind: "prompt", id: "q", text: "after resume" },
  ]);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual(userTexts(lastRequest()), ["one", "after resume"]);
  const replayed = resumed.lines.filter((l) => l.replay && l.kind === "text" && l.role === "user").map((l) => l.content);
  assert.deepEqual(replayed, ["one"]);
  const log = (await sb.show(session)).events;
  assert.deepEqual(log.filter((e) => e.kind === "text" && e.role === "user").map((e) => e.content),
    ["one", "two", "three", "two, differently", "after resume"], "append-only: nothing was deleted");
  // The command through main() in this process (a Keen start less): what it prints is Keen's own; run-store,
  // headless-replay and terminal-output run it as a real process.
  const shown = await sb.main(["sessions", "show", session]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /> one\n[\s\S]*> after resume/);
  assert.doesNotMatch(shown.stdout, /> three|> two/, "sessions show prints the current history");
});

/*
 * The refused rewind and undo share one `keen stdio` (a start costs ~0.7 s of CPU, more as the sandbox
 * warms up), each in a session of its own (`new-session`) in a git workspace of its own, with ids of
 * its own; the last of them ends it and checks it exits 0.
 */
let sharedStdio: { sb: ReturnType<typeof makeSandbox>; client: StdioClient } | undefined;
after(() => sharedStdio?.client.child.kill("SIGKILL"));
/** A new session of the shared `keen stdio` in a new git workspace holding a.txt v0; returns that workspace. */
async function sharedSession(name: string) {
  if (!sharedStdio) {
    const sb = makeSandbox(server.url);
    sharedStdio = { sb, client: startStdio(["--model", MODEL, "--permission-mode", "auto"], sb.env, sb.workspace, 180_000) };
  }
  const { sb, client } = sharedStdio;
  const workspace = join(sb.workspace, name);
  mkdirSync(workspace);
  gitWorkspace({ workspace });
  client.send({ kind: "new-session", id: `${name}-new`, cwd: workspace });
  const opened = await client.response(`${name}-new`);
  assert.equal(opened.ok, true, opened.error);
  return { client, workspace };
}

test("a file changed outside Keen refuses the rewind, and nothing changes: no file, no conversation", async () => {
  const { client, workspace } = await sharedSession("refused");
  const a = join(workspace, "a.txt");
  const b = join(workspace, "b.txt");
  await threeTurns(client, "refused-");
  writeFileSync(a, "mine\n");
  client.send({ kind: "rewind", id: "r", to: 2, files: true });
  const refused = await client.response("r");
  assert.deepEqual([refused.ok, refused.error_code, refused.data], [false, "file_changed", { paths: [a] }]);
  assert.match(refused.error, /a\.txt changed since/);
  assert.equal(readFileSync(a, "utf8"), "mine\n");
  assert.equal(readFileSync(b, "utf8"), "new\n", "b.txt, unchanged outside, was not restored either");
  client.send({ kind: "list-checkpoints", id: "l" });
  assert.equal((await client.response("l")).data.checkpoints.length, 3, "the conversation was not rewound");
  client.send({ kind: "rewind", id: "bad", to: 9 });
  assert.equal((await client.response("bad")).error_code, "unknown_checkpoint");
});

test("undo walks back turn by turn, tells the model, and a second undo does not undo the first", async () => {
  const { client, workspace } = await sharedSession("undo");
  const a = join(workspace, "a.txt");
  await threeTurns(client, "undo-");
  client.send({ kind: "undo", id: "u1", confirm: true });
  assert.deepEqual((await client.response("u1")).data, { files: [{ path: a, action: "restore" }], restored: true, to: 3 });
  assert.equal(readFileSync(a, "utf8"), "v2\n");
  client.send({ kind: "undo", id: "u2", confirm: true });
  assert.equal((await client.response("u2")).data.to, 2);
  assert.equal(readFileSync(a, "utf8"), "v1\n");
  assert.equal(existsSync(join(workspace, "b.txt")), false);
  server.enqueue({ text: "noted" });
  await prompt(client, "p", "go on");
  const last = lastRequest().messages.at(-1);
  assert.match(JSON.stringify(last.content), /files_reverted/, "the model hears that its files were put back");
  assert.deepEqual(userTexts(lastRequest()), ["one", "two", "three", "go on"], "undo keeps the conversation");
  assert.equal((await client.end()).code, 0);
});

test("fork at a point, continue both branches, and resume each from another process", async () => {
  const sb = makeSandbox(server.url);
  gitWorkspace(sb);
  const client = startStdio(["--model", MODEL, "--permission-mode", "auto"], sb.env, sb.workspace, 90_000);
  server.enqueue({ text: "first answer" });
  const original = (await prompt(client, "p1", "first")).data.session_id;
  server.enqueue({ text: "second answer" });
  await prompt(client, "p2", "second");

  client.send({ kind: "fork-session", id: "f", at: 2 });
  const forked = await client.response("f");
  assert.equal(forked.ok, true, forked.error);
  assert.deepEqual([forked.data.parent, forked.data.at, forked.data.text], [original, 2, "second"]);
  const fork = forked.data.session_id;
  assert.notEqual(fork, original);
  server.enqueue({ text: "fork answer" });
  assert.equal((await prompt(client, "pf", "fork branch")).data.session_id, fork);
  assert.deepEqual(userTexts(lastRequest()), ["first", "fork branch"]);
  assert.equal((await client.end()).code, 0);

  // The original continues where it was, in another process.
  server.enqueue({ text: "original again" });
  // --sandbox off here and below: these turns only talk (a turn with bash available warms the sandbox).
  const orig = await runScript(sb.run, ["--model", MODEL, "--sandbox", "off", "--session", original], [{ kind: "prompt", id: "q", text: "original branch" }]);
  assert.equal(orig.code, 0, orig.stderr);
  assert.deepEqual(userTexts(lastRequest()), ["first", "second", "original branch"]);

  // The fork resumed from another process holds its own history.
  server.enqueue({ text: "fork again" });
  const again = await runScript(sb.run, ["--model", MODEL, "--sandbox", "off"], [{ kind: "resume-session", id: "r", session: fork }, { kind: "prompt", id: "q", text: "fork continues" }]);
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(userTexts(lastRequest()), ["first", "fork branch", "fork continues"]);

  const sessions = await sb.sessions();
  assert.deepEqual(sessions.find((s) => s.id === fork)!.parent, { id: original, at: 2 });
  assert.equal(sessions.find((s) => s.id === original)!.parent, undefined);
  // `keen sessions fork`, its usage error and how `keen sessions list` shows a fork: test/cli/sessions-fork.test.ts, in process.
});
