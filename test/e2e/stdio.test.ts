import { after, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";
import { kindSequence } from "./protocol-check.js";
import { startStdio } from "./stdio-client.js";

const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();

function open(args: string[] = [], config: Record<string, unknown> = {}) {
  const sb = makeSandbox(server.url, config);
  const client = startStdio(["--model", MODEL, ...args], sb.env, sb.workspace);
  return { sb, client };
}

/**
 * `open` for tests whose turns only talk (no tool runs): the sandbox plays no role there, and
 * with bash available every turn would warm it in the background (~0.25 s of CPU each).
 */
const talk = () => open(["--sandbox", "off"]);

/*
 * The interrupt, framing and EOF tests are about what one process does with what it reads: they
 * share one talk() process (~0.5 s of CPU each to start), each in a new session and reading from
 * its own mark; the EOF test, last, ends it. Their command ids differ: responses are looked up
 * over the whole stream.
 */
let sharedTalk: ReturnType<typeof talk> | undefined;
const shared = () => (sharedTalk ??= talk());
after(() => {
  // A test that failed may have left it running.
  if (sharedTalk && sharedTalk.client.child.exitCode === null) sharedTalk.client.child.kill("SIGKILL");
});

/** Texts of the messages the model saw in request `i`, one string per message. */
function seen(i: number): string[] {
  const body = server.requests[i]!.body as { messages: { role: string; content: string | { type: string; text?: string; content?: unknown }[] }[] };
  return body.messages.map((m) => `${m.role}: ${typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? JSON.stringify(b.content ?? b.type)).join(" | ")}`);
}

function assertContiguous(lines: Record<string, any>[]) {
  assert.deepEqual(lines.map((l) => l.seq), lines.map((_, i) => i), "seq is contiguous over the whole stream");
}

test("multi-turn: a follow-up sees the first exchange, a prompt sent during a turn is queued, shutdown exits 0", async () => {
  const { client } = talk();
  server.enqueue({ text: "First answer.", delayMs: 20, chunkSize: 3 }, { text: "Second answer." }, { text: "Third answer." });
  client.send({ kind: "prompt", id: "p1", text: "first question" });
  await client.next((l) => l.kind === "text-delta");
  client.send({ kind: "prompt", id: "p2", text: "second question" });
  const r1 = await client.response("p1");
  const r2 = await client.response("p2");
  assert.deepEqual([r1.ok, r1.data.status, r2.ok, r2.data.status], [true, "success", true, "success"]);
  client.send({ kind: "prompt", id: "p3", text: "third question" });
  await client.response("p3");
  client.send({ kind: "shutdown", id: "bye" });
  const { code, stderr } = await client.exited;
  assert.equal(code, 0, stderr);
  const kinds = client.lines.map((l) => l.kind);
  assert.equal(kinds.filter((k) => k === "session-start").length, 1, "one session: one session-start");
  assert.equal(kinds.filter((k) => k === "result").length, 3);
  assert.equal(kinds.at(-1), "response");
  const results = client.lines.filter((l) => l.kind === "result");
  assert.deepEqual(results.map((r) => r.text), ["First answer.", "Second answer.", "Third answer."]);
  // The queued prompt's turn started only after the first turn's result.
  const firstResult = kinds.indexOf("result");
  const secondUser = client.lines.findIndex((l) => l.kind === "text" && l.role === "user" && l.content === "second question");
  assert.ok(secondUser > firstResult);
  assert.deepEqual(seen(1), ["user: first question", "assistant: First answer.", "user: second question"]);
  assert.deepEqual(seen(2).length, 5);
  assert.ok(results.every((r) => r.context && r.context.window > 0 && r.context.used > 0));
  assertContiguous(client.lines);
});

test("interrupt mid-stream ends the turn as interrupted; the next prompt works and sees the partial text", async () => {
  const { client } = shared();
  // A session of its own: the model sees only this test's turns.
  client.send({ kind: "new-session", id: "s-interrupt" });
  assert.equal((await client.response("s-interrupt")).ok, true);
  const mark = client.lines.length;
  // The answer stalls after a few chunks and would never end on its own: only the interrupt can end the turn
  // (no wall-clock bound, which a loaded machine breaks).
  server.enqueue({ text: "word ".repeat(400), delayMs: 25, chunkSize: 5, stallAfterChunks: 8 }, { text: "Fresh answer." });
  client.send({ kind: "prompt", id: "p1", text: "talk a lot" });
  await client.next((l) => l.kind === "text-delta", mark);
  client.send({ kind: "interrupt", id: "stop" });
  const result = await client.next((l) => l.kind === "result");
  assert.equal(result.status, "interrupted");
  assert.equal((await client.response("stop")).ok, true);
  client.send({ kind: "prompt", id: "p2", text: "again" });
  const second = await client.response("p2");
  assert.equal(second.data.status, "success");
  assert.match(seen(1)[1]!, /^assistant: word/);
  assert.match(seen(1)[1]!, /\[turn interrupted\]/);
});

test("permissions in ask mode: deny with a message, then allow-always, and the next call of that tool does not ask", async () => {
  const { client, sb } = open(["--permission-mode", "ask"]);
  server.enqueue(
    { toolCalls: [{ id: "c1", name: "bash", input: { command: "echo one" } }] },
    { toolCalls: [{ id: "c2", name: "bash", input: { command: "echo two" } }] },
    { toolCalls: [{ id: "c3", name: "bash", input: { command: "echo three" } }] },
    { text: "Done." },
  );
  client.send({ kind: "prompt", id: "p", text: "run things" });
  const ask1 = await client.next((l) => l.kind === "permission-request");
  assert.deepEqual([ask1.tool_name, ask1.tool_call_id, JSON.parse(ask1.input)], ["bash", "c1", { command: "echo one" }]);
  client.send({ kind: "permission-response", id: "a1", request_id: ask1.request_id, decision: "deny", message: "not that one" });
  const denied = await client.next((l) => l.kind === "tool-result");
  assert.equal(denied.is_error, true);
  assert.match(denied.result, /denied.*not that one/);
  const ask2 = await client.next((l) => l.kind === "permission-request");
  client.send({ kind: "permission-response", id: "a2", request_id: ask2.request_id, decision: "allow-always" });
  const ran = await client.next((l) => l.kind === "tool-result");
  assert.deepEqual([ran.is_error, ran.result.trim()], [false, "two"]);
  const third = await client.next((l) => l.kind === "tool-result");
  assert.deepEqual([third.tool_call_id, third.result.trim()], ["c3", "three"]);
  await client.response("p");
  assert.equal(client.lines.filter((l) => l.kind === "permission-request").length, 2, "the third call did not ask");
  // tool-start only for calls that ran, after their answer.
  assert.deepEqual(client.lines.filter((l) => l.kind === "tool-start").map((l) => l.tool_call_id), ["c2", "c3"]);
  assert.match(JSON.stringify(server.requests[1]!.body), /not that one/);
  // A response for no pending request is an error, not fatal.
  client.send({ kind: "permission-response", id: "late", request_id: ask1.request_id, decision: "allow-once" });
  assert.equal((await client.response("late")).ok, false);
  assert.equal((await client.end()).code, 0);

  // allow-always holds after resume: a new process on the same session runs bash without asking.
  const sessionId = client.lines[0]!.conversation_id;
  server.enqueue({ toolCalls: [{ id: "c4", name: "bash", input: { command: "echo four" } }] }, { text: "ok" });
  const again = startStdio(["--model", MODEL, "--session", sessionId], sb.env, sb.workspace);
  again.send({ kind: "prompt", id: "p", text: "once more" });
  await again.response("p");
  assert.equal(again.lines.filter((l) => l.kind === "permission-request").length, 0);
  assert.equal(again.lines.find((l) => l.kind === "tool-result")!.result.trim(), "four");
  assert.equal((await again.end()).code, 0);
});

test("permission modes: accept-edits writes without asking and asks for bash; read-only refuses both; auto asks nothing; ask asks for both, an edit's request carrying the diff it would make", async () => {
  const script = () => server.enqueue(
    { toolCalls: [{ id: "w", name: "write_file", input: { path: "a.txt", content: "hello\n" } }, { id: "b", name: "bash", input: { command: "echo hi" } }] },
    { text: "ok" },
  );
  // One process, the mode set by the client before each prompt (no --permission-mode: nothing caps it).
  // --sandbox off: sandboxed, accept-edits runs bash unasked (test/e2e/sandbox.test.ts).
  const { client, sb } = open(["--sandbox", "off"]);
  let n = 0;
  const run = async (mode: string, answer?: string) => {
    rmSync(join(sb.workspace, "a.txt"), { force: true });
    const from = client.lines.length;
    const id = `${mode}-${n++}`;
    script();
    client.send({ kind: "set-permission-mode", id: `m-${id}`, mode });
    client.send({ kind: "prompt", id: `p-${id}`, text: "go" });
    for (let at = from; ;) {
      const line = await client.next((l) => l.kind === "permission-request" || (l.kind === "response" && l.id === `p-${id}`), at);
      at = client.lines.indexOf(line) + 1;
      if (line.kind === "response") break;
      client.send({ kind: "permission-response", request_id: line.request_id, decision: answer ?? "deny" });
    }
    assert.equal((await client.response(`m-${id}`)).ok, true);
    const lines = client.lines.slice(from);
    const asks = lines.filter((l) => l.kind === "permission-request");
    const results = lines.filter((l) => l.kind === "tool-result").map((l) => [l.tool_name, l.is_error]);
    return { asked: asks.map((l) => l.tool_name), results, wrote: existsSync(join(sb.workspace, "a.txt")), diff: asks[0]?.diff };
  };
  const { diff: _none, ...edits } = await run("accept-edits", "allow-once");
  assert.deepEqual(edits, { asked: ["bash"], results: [["write_file", false], ["bash", false]], wrote: true });
  assert.deepEqual(await run("read-only"), { asked: [], results: [["write_file", true], ["bash", true]], wrote: false, diff: undefined });
  assert.deepEqual(await run("auto"), { asked: [], results: [["write_file", false], ["bash", false]], wrote: true, diff: undefined });
  // An edit's permission request carries the diff it would make; denied, nothing is written.
  const denied = await run("ask", "deny");
  assert.deepEqual([denied.asked, denied.results, denied.wrote], [["write_file", "bash"], [["write_file", true], ["bash", true]], false]);
  assert.match(denied.diff, /^\+hello$/m);
  const ask = await run("ask", "allow-always");
  assert.deepEqual(ask.asked, ["write_file", "bash"]);
  assert.equal((await client.end()).code, 0);
});

test("session switch and resume, list-sessions, and a second process continuing between two turns", async () => {
  const { client, sb } = talk();
  server.enqueue({ text: "A1" });
  client.send({ kind: "prompt", id: "a", text: "in session A" });
  await client.response("a");
  const a = client.lines[0]!.conversation_id as string;

  // Another process continues session A between this process's turns.
  server.enqueue({ text: "from the other process" });
  const other = await sb.run(["run", "--session", a, "--model", MODEL, "--sandbox", "off", "--no-stdin", "other turn"]);
  assert.equal(other.code, 0, other.stderr);

  server.enqueue({ text: "A2" });
  const mark = client.lines.length;
  client.send({ kind: "prompt", id: "a2", text: "back in A" });
  await client.response("a2");
  const replayed = client.lines.slice(mark).filter((l) => l.replay);
  assert.deepEqual(replayed.map((l) => [l.kind, l.content]), [["text", "other turn"], ["text", "from the other process"]]);
  assert.deepEqual(seen(2), ["user: in session A", "assistant: A1", "user: other turn", "assistant: from the other process", "user: back in A"]);

  client.send({ kind: "new-session", id: "n" });
  const created = await client.response("n");
  server.enqueue({ text: "B1" });
  client.send({ kind: "prompt", id: "b", text: "in session B" });
  await client.response("b");
  const starts = client.lines.filter((l) => l.kind === "session-start");
  assert.equal(starts.length, 2);
  assert.equal(starts[1]!.conversation_id, created.data.session_id);
  assert.notEqual(created.data.session_id, a);
  assert.deepEqual(seen(3), ["user: in session B"]);

  client.send({ kind: "list-sessions", id: "ls", cwd: sb.workspace });
  const listed = await client.response("ls");
  assert.deepEqual(listed.data.map((s: { id: string }) => s.id).sort(), [a, created.data.session_id].sort());

  client.send({ kind: "resume-session", id: "r", session: a.slice(0, 30), replay: true });
  const resumed = await client.response("r");
  assert.equal(resumed.data.session_id, a);
  const history = client.lines.filter((l) => l.replay && l.conversation_id === a && l.kind === "text");
  assert.ok(history.length >= 6);
  server.enqueue({ text: "A3" });
  client.send({ kind: "prompt", id: "a3", text: "A again" });
  await client.response("a3");
  assert.equal(seen(4).length, 7);
  assert.equal(client.lines.filter((l) => l.kind === "session-start").length, 3, "the switch back starts with a session-start");
  client.send({ kind: "list-models", id: "lm" });
  const models = await client.response("lm");
  assert.ok(models.data.some((m: { model: string }) => m.model.startsWith("anthropic/")));
  assert.equal((await client.end()).code, 0);
  assertContiguous(client.lines);
});

test("framing: malformed, unknown, ill-fitting and oversized lines get error responses and the process reads on", async () => {
  const { client } = shared();
  // A session of its own: the model sees only this test's turns.
  client.send({ kind: "new-session", id: "s-framing" });
  assert.equal((await client.response("s-framing")).ok, true);
  const mark = client.lines.length;
  client.send("this is not json");
  client.send({ kind: "fly", id: "u" });
  client.send({ kind: "prompt", id: "bad" });
  client.send("[1,2]");
  client.send({ kind: "resume-session", id: "nope", session: "zzzz" });
  client.send(`{"kind":"prompt","id":"huge","text":"${"x".repeat(17 * 1024 * 1024)}"}`);
  // U+2028 inside a string is not a line break.
  server.enqueue({ text: "fine" });
  client.send(`{"kind":"prompt","id":"ok","text":"a\u2028b"}\r`);
  const ok = await client.response("ok");
  assert.equal(ok.ok, true);
  const errors = client.lines.slice(mark).filter((l) => l.kind === "response" && !l.ok);
  assert.equal(errors.length, 6);
  assert.match(errors[0]!.error, /not JSON/);
  assert.match((await client.response("u")).error, /unknown command "fly"/);
  assert.match((await client.response("bad")).error, /text/);
  assert.match((await client.response("nope")).error, /zzzz/);
  assert.ok(errors.some((e) => /too long/.test(e.error)));
  assert.deepEqual(seen(0), ["user: a\u2028b"]);
});

test("EOF in the middle of a turn: the turn ends, its result is written, exit 0", async () => {
  const { client, sb } = shared();
  // A session of its own: the model sees only this test's turns.
  client.send({ kind: "new-session", id: "s-eof" });
  assert.equal((await client.response("s-eof")).ok, true);
  const mark = client.lines.length;
  server.enqueue({ text: "a slow but complete answer", delayMs: 30, chunkSize: 4 });
  client.send({ kind: "prompt", id: "p", text: "go" });
  await client.next((l) => l.kind === "text-delta", mark);
  const { code, stderr } = await client.end();
  assert.equal(code, 0, stderr);
  const result = client.lines.slice(mark).find((l) => l.kind === "result")!;
  assert.deepEqual([result.status, result.text], ["success", "a slow but complete answer"]);
  const stored = readFileSync(join(sb.home, "config.json"), "utf8");
  assert.ok(stored.length > 0);
});

test("keen run --headless --input-format jsonl is keen stdio; keen protocol schema --commands prints the command schema", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ text: "hi there" });
  const r = await sb.run(["run", "--headless", "--input-format", "jsonl", "--model", MODEL, "--sandbox", "off"], {
    stdin: `${JSON.stringify({ kind: "prompt", id: "1", text: "hello" })}\n`,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(kindSequence(parseLines(r.stdout)), ["session-start", "text", "text-delta", "content-end", "text", "result", "response"]);
  const schema = await sb.run(["protocol", "schema", "--commands"]);
  const parsed = JSON.parse(schema.stdout);
  const kindsInSchema = parsed.oneOf.map((o: { properties: { kind: { const: string } } }) => o.properties.kind.const);
  assert.deepEqual(kindsInSchema, [
    "prompt", "interrupt", "permission-response", "set-model", "set-permission-mode", "new-session", "resume-session",
    "list-sessions", "list-models", "list-files", "list-commands", "list-skills", "shutdown", "undo", "compact", "shell",
    "list-checkpoints", "rewind", "fork-session", "kill-job",
  ]);
  const ask = await sb.run(["run", "--permission-mode", "ask", "--model", MODEL, "--no-stdin", "hi"]);
  assert.equal(ask.code, 2);
  assert.match(ask.stderr, /keen stdio/);
});
