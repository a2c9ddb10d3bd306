import { test } from "node:test";
import assert from "node:assert/strict";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";

// Resume semantics of text turns, `keen run --session` in this process (test/cli/in-process.ts).
// test/e2e/run-resume.test.ts keeps the resumes that run tools or follow a killed process.

const server = useMockLLMServer();

/** The messages of request `i`, without cache breakpoints (they move with the latest message). */
function messagesOf(i: number): unknown[] {
  return JSON.parse(JSON.stringify(server.requests[i]!.body.messages, (k, v) => (k === "cache_control" ? undefined : v)));
}
const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });
const assistant = (text: string) => ({ role: "assistant", content: [{ type: "text", text }] });

test("an ambiguous prefix is a usage error listing the matches", async () => {
  const sb = makeInProcessSandbox(server);
  server.enqueue({ text: "a" }, { text: "b" });
  const a = await sb.runJson(["one"]);
  const b = await sb.runJson(["two"]);
  const r = await sb.keen(["run", "--no-stdin", "--sandbox", "off", "--session", a.session_id.slice(0, 4), "three"]);
  assert.deepEqual({ code: r.code, stdout: r.stdout }, { code: 2, stdout: "" });
  assert.match(r.stderr, /^keen: '[0-9a-f]{4}' matches 2 sessions: [^\n]*give more characters\n$/);
  assert.ok(r.stderr.includes(a.session_id) && r.stderr.includes(b.session_id));
  assert.equal(server.requests.length, 2);
});

test("a resumed session keeps its model unless --model says otherwise", async () => {
  const sb = makeInProcessSandbox(server);
  server.enqueue({ text: "one" }, { text: "two" }, { text: "three" });
  const first = await sb.runJson(["--model", "anthropic/claude-haiku-4-5", "hello"]);
  await sb.runJson(["--session", first.session_id, "again"]);
  await sb.runJson(["--session", first.session_id, "--model", "openai/gpt-4.1", "switch"], {
    env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.openaiBaseURL },
  });
  assert.deepEqual(server.requests.map((q) => [q.vendor, q.body.model]), [
    ["anthropic", "claude-haiku-4-5"],
    ["anthropic", "claude-haiku-4-5"],
    ["openai", "gpt-4.1"],
  ]);
  // The conversation carries over to the other provider.
  const sent = server.requests[2]!.body.messages.map((m: { role: string; content: unknown }) => [m.role, m.content]);
  assert.deepEqual(sent.slice(1), [
    ["user", "hello"], ["assistant", "one"], ["user", "again"], ["assistant", "two"], ["user", "switch"],
  ]);
  assert.deepEqual((await sb.sessions()).map((s) => s.model), ["openai/gpt-4.1"]);
});

test("resume after a failed turn: the broken turn is closed with its stored text and [turn error]", async () => {
  const sb = makeInProcessSandbox(server, { retry: { maxRetries: 0, baseDelayMs: 10 } });
  server.enqueue({ text: "Partial answer that breaks", errorAfterChunks: 5 });
  const failed = await sb.keen(["run", "--format", "json", "--no-stdin", "--sandbox", "off", "doomed"]);
  assert.equal(failed.code, 1);
  const result = JSON.parse(failed.stdout);
  assert.deepEqual([result.status, result.is_error], ["error", true]);
  assert.deepEqual((await sb.sessions()).map((s) => s.status), ["error"]);

  server.enqueue({ text: "Recovered." });
  const resumed = await sb.runJson(["--session", result.session_id, "try again"]);
  assert.equal(resumed.text, "Recovered.");
  assert.deepEqual(messagesOf(1), [user("doomed"), assistant("Partial answer \n\n[turn error]"), user("try again")]);

  // A turn that failed before any text is closed with the marker alone.
  server.enqueue({ kind: "http-error", status: 400 });
  assert.equal((await sb.keen(["run", "--no-stdin", "--sandbox", "off", "--session", result.session_id, "bad"])).code, 1);
  server.enqueue({ text: "ok" });
  await sb.runJson(["--session", result.session_id, "last"]);
  assert.deepEqual(messagesOf(3).slice(-3), [user("bad"), assistant("[turn error]"), user("last")]);
  assert.deepEqual(server.unexpected, []);
});
