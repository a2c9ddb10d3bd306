import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines, waitForStdout } from "./harness.js";

// Resumes of text turns (an ambiguous prefix, the model kept or switched, after a failed turn) run
// in process in test/cli/resume.test.ts; here are those that run tools or follow a killed process.

const server = useMockLLMServer();

type Sandbox = ReturnType<typeof makeSandbox>;

/** The messages of request `i`, without cache breakpoints (they move with the latest message). */
function messagesOf(i: number): unknown[] {
  return JSON.parse(JSON.stringify(server.requests[i]!.body.messages, (k, v) => (k === "cache_control" ? undefined : v)));
}
const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
const assistant = (text: string) => ({ role: "assistant", content: [{ type: "text", text }] });

/** A successful `--format json` run; returns the result. */
async function runJson(sb: Sandbox, args: string[], options: Parameters<Sandbox["run"]>[1] = {}) {
  const r = await sb.run(["run", "--format", "json", "--no-stdin", ...args], options);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/**
 * `runJson` through main() in this process (a Keen start less), for talk-only turns whose process is not
 * the point: resume semantics are Keen's own (test/cli/resume.test.ts has the case table); each test here
 * keeps its resumes by a real process.
 */
async function mainJson(sb: Sandbox, args: string[]) {
  const r = await sb.main(["run", "--format", "json", "--no-stdin", ...args]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/**
 * `--sandbox off` for the talk-only turns run in this process (main()), so the test process never
 * starts the sandbox's proxies; the spawned Keens keep the sandbox at its default, as a user's does.
 */
const TALK_ONLY = ["--sandbox", "off"];

/** The content of the first tool_result block the model received in request `i`. */
function toolResultSent(i: number): string {
  const last = server.requests[i]!.body.messages.at(-1);
  const block = last.content.find((b: { type: string }) => b.type === "tool_result");
  return typeof block.content === "string" ? block.content : block.content.map((c: { text: string }) => c.text).join("");
}

test("resume by full id and by unique prefix: later turns see user messages and assistant text, not raw tool I/O", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue(
    { text: "Checking.", toolCalls: [{ name: "bash", input: { command: "echo RAW_TOOL_OUTPUT_42" } }] },
    { text: "Found it." },
  );
  const first = await runJson(sb, ["first question"]);
  assert.match(toolResultSent(1), /RAW_TOOL_OUTPUT_42/);

  server.enqueue({ text: "Second answer." });
  const second = await runJson(sb, ["--session", first.session_id, "second question"]);
  assert.equal(second.session_id, first.session_id);
  assert.equal(second.text, "Second answer.");
  assert.deepEqual(messagesOf(2), [user("first question"), assistant("Checking.\n\nFound it."), user("second question")]);
  assert.doesNotMatch(JSON.stringify(server.requests[2]!.body.messages), /RAW_TOOL_OUTPUT_42|tool_use|tool_result/);

  server.enqueue({ text: "Third answer." });
  const third = await mainJson(sb, [...TALK_ONLY, "--session", first.session_id.slice(0, 10), "third question"]);
  assert.equal(third.session_id, first.session_id);
  assert.deepEqual(messagesOf(3), [
    user("first question"), assistant("Checking.\n\nFound it."),
    user("second question"), assistant("Second answer."),
    user("third question"),
  ]);
  const sessions = await sb.sessions();
  assert.deepEqual(sessions.map((s) => [s.id, s.status, s.title]), [[first.session_id, "success", "first question"]]);
  assert.deepEqual(server.unexpected, []);
  assert.equal(server.pending(), 0);
});

test("resumed from another directory, tools run in the session's cwd; --cwd overrides", async () => {
  const sb = makeSandbox(server.url);
  const elsewhere = join(sb.root, "elsewhere");
  mkdirSync(elsewhere);
  server.enqueue({ text: "hi" });
  const first = await mainJson(sb, [...TALK_ONLY, "start here"]);

  server.enqueue({ toolCalls: [{ name: "bash", input: { command: "pwd" } }] }, { text: "done" });
  await runJson(sb, ["--session", first.session_id, "where are you?"], { cwd: elsewhere });
  assert.equal(toolResultSent(2).trim(), sb.workspace);

  server.enqueue({ toolCalls: [{ name: "bash", input: { command: "pwd" } }] }, { text: "done" });
  await runJson(sb, ["--session", first.session_id, "--cwd", elsewhere, "and now?"]);
  assert.equal(toolResultSent(4).trim(), elsewhere);
  assert.deepEqual(server.unexpected, []);
});

test("resume after kill -9 mid-stream: the session opens, is listed interrupted, and resumes", async () => {
  const sb = makeSandbox(server.url);
  const words = Array.from({ length: 200 }, (_, i) => `w${i} `).join("");
  server.enqueue({ text: words, delayMs: 20 });
  const killed = await sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", "long story"], {
    onSpawn: (child) => {
      void waitForStdout(child, (out) => out.includes('"text-delta"')).then(() => child.kill("SIGKILL"), () => {});
    },
  });
  assert.equal(killed.signal, "SIGKILL");
  const id = parseLines(killed.stdout.slice(0, killed.stdout.lastIndexOf("\n") + 1))[0]!.conversation_id;

  const [listed] = await sb.sessions();
  assert.deepEqual([listed!.id, listed!.status], [id, "interrupted"]);
  // The prompt is stored before the model is asked, so the killed turn is not lost.
  const shown = await sb.show(id);
  assert.deepEqual(shown.events.slice(0, 2).map((e) => e.kind), ["session-start", "user-message"]);

  server.enqueue({ text: "Back again." });
  const resumed = await runJson(sb, ["--session", id, "continue"]);
  assert.equal(resumed.text, "Back again.");
  assert.deepEqual(messagesOf(1), [user("long story"), assistant("[turn interrupted]"), user("continue")]);
  assert.deepEqual((await sb.sessions()).map((s) => s.status), ["success"]);
});

test("with extended thinking on, a tool turn and a resumed turn pass the API's rules", async () => {
  const sb = makeSandbox(server.url, { providers: { anthropic: { models: { "claude-sonnet-5-5": { thinkingBudget: 2000 } } } } });
  server.enqueue(
    { thinking: "plan", signature: "sig-1", toolCalls: [{ name: "bash", input: { command: "echo x" } }] },
    { thinking: "conclude", redactedThinking: "opaque", text: "Answer one." },
    { thinking: "again", text: "Answer two." },
  );
  const first = await runJson(sb, ["think first"]);
  const second = await runJson(sb, ["--session", first.session_id, "think again"]);
  assert.deepEqual([first.text, second.text], ["Answer one.", "Answer two."]);
  assert.deepEqual(server.rejected, []);
  assert.deepEqual(server.requests.map((q) => q.body.thinking), Array(3).fill({ type: "enabled", budget_tokens: 2000 }));
  // Within the turn the signed thinking goes back unchanged; across turns only the text is replayed.
  assert.deepEqual(server.requests[1]!.body.messages[1].content[0], { type: "thinking", thinking: "plan", signature: "sig-1" });
  assert.deepEqual(messagesOf(2), [user("think first"), assistant("Answer one."), user("think again")]);
});
