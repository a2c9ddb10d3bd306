import { test } from "node:test";
import assert from "node:assert/strict";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox } from "./harness.js";

const server = useMockLLMServer();
// Text answers only, about how the prompt is read: no tool runs, so the sandbox plays no role and
// is off (with bash available, every turn would warm it up: ~0.25 s of CPU per Keen).
const TEXT_ONLY = { sandbox: { mode: "off" } };

/** The text of the user message the model received in request `i`. */
function promptSent(i = 0): string {
  const first = server.requests[i]!.body.messages[0];
  assert.equal(first.role, "user");
  return first.content.map((b: { text: string }) => b.text).join("");
}

/** Runs one prompt and returns what the model saw, asserting a clean success. */
async function promptFor(args: string[], options: Parameters<ReturnType<typeof makeSandbox>["run"]>[1] = {}) {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  server.enqueue({ text: "answer" });
  const r = await sb.run(["run", ...args], options);
  assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 0, stdout: "answer\n", stderr: "" });
  assert.deepEqual(server.unexpected, []);
  const [session] = await sb.sessions();
  return { prompt: promptSent(), title: session!.title };
}

test("args only: joined by spaces (stdin closed without data)", async () => {
  assert.deepEqual(await promptFor(["hello", "there", "world"]), { prompt: "hello there world", title: "hello there world" });
});

test("stdin only: the piped text, trailing newline dropped", async () => {
  assert.deepEqual(await promptFor([], { stdin: "Say hello from stdin\n" }), {
    prompt: "Say hello from stdin", title: "Say hello from stdin",
  });
});

test("args and stdin: args, a newline, then stdin", async () => {
  assert.deepEqual(await promptFor(["summarize", "this", "diff"], { stdin: "line 1\nline 2\n" }), {
    prompt: "summarize this diff\nline 1\nline 2", title: "summarize this diff",
  });
});

test("--no-stdin never reads stdin, even when it holds data", async () => {
  assert.deepEqual(await promptFor(["--no-stdin", "only", "args"], { stdin: "ignored text" }), {
    prompt: "only args", title: "only args",
  });
});

test("--no-stdin with an open pipe does not wait for it", async () => {
  const sb = makeSandbox(server.url, { ...TEXT_ONLY, stdinGraceMs: 60_000 });
  server.enqueue({ text: "answer" });
  const r = await sb.run(["run", "--no-stdin", "quick"], { stdin: "open", timeoutMs: 30_000 });
  assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 0, stdout: "answer\n", stderr: "" });
});

test("an open pipe with no data and args present is ignored after the grace period, with a note on stderr", async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  server.enqueue({ text: "answer" });
  const r = await sb.run(["run", "args", "only"], { stdin: "open" });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "answer\n");
  assert.equal(
    r.stderr,
    "keen: stdin brought no data within 300 ms; ignoring it (use --no-stdin to skip it)\n",
  );
  assert.equal(promptSent(), "args only");
});

for (const [name, stdin] of [["nothing at all", ""], ["only whitespace", "  \n\n"]] as const) {
  test(`empty prompt (${name}) → exit 2, one line on stderr, nothing on stdout, no session`, async () => {
    const sb = makeSandbox(server.url, TEXT_ONLY);
    const r = await sb.run(["run"], { stdin });
    assert.deepEqual({ code: r.code, stdout: r.stdout }, { code: 2, stdout: "" });
    assert.match(r.stderr, /^keen: empty prompt[^\n]*\n$/);
    assert.deepEqual(await sb.sessions(), []);
    assert.equal(server.requests.length, 0);
  });
}

test("empty args with an empty argument string → usage error", async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  const r = await sb.run(["run", "--no-stdin", " "]);
  assert.deepEqual({ code: r.code, stdout: r.stdout }, { code: 2, stdout: "" });
  assert.match(r.stderr, /^keen: empty prompt[^\n]*\n$/);
  assert.deepEqual(await sb.sessions(), []);
});
