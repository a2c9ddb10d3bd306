import { test } from "node:test";
import assert from "node:assert/strict";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, runKeen } from "./harness.js";

const server = useMockLLMServer();
// No tool runs here: the sandbox plays no role and is off (it would warm up in every turn).
const TEXT_ONLY = { sandbox: { mode: "off" } };

test("a prompt larger than the model's window is refused before any request, with the estimate: exit 2, no session", async () => {
  const sb = makeSandbox(server.url, { ...TEXT_ONLY, providers: { anthropic: { models: { tiny: { contextWindow: 1000 } } } } });
  const r = await sb.run(["run", "--model", "anthropic/tiny", "summarise"], { stdin: "x".repeat(5000) });
  assert.deepEqual({ code: r.code, stdout: r.stdout }, { code: 2, stdout: "" });
  assert.equal(r.stderr, "keen: the prompt is too large for anthropic/tiny: 5,010 characters ≈ 1,253 tokens, its context window is 1,000 tokens; send less (or a model with a larger window)\n");
  assert.equal(server.requests.length, 0);
  assert.deepEqual(await sb.sessions(), []);
});

test("binary stdin is refused with one clear line unless --binary-stdin", async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  for (const [bytes, why] of [["text\x00more", /a NUL byte at offset 4 of 9/], ["\xff\xfe bad", /not valid UTF-8 text/]] as const) {
    const r = await runKeen(["run", "summarise"], { cwd: sb.workspace, env: sb.env, stdin: Buffer.from(bytes, "latin1") });
    assert.deepEqual({ code: r.code, stdout: r.stdout }, { code: 2, stdout: "" });
    assert.match(r.stderr, why);
    assert.match(r.stderr, /pass --binary-stdin to send it anyway\n$/);
  }
  assert.equal(server.requests.length, 0);
  server.enqueue({ text: "ok" });
  const sent = await sb.run(["run", "--binary-stdin", "summarise"], { stdin: Buffer.from("a\x00b", "latin1") });
  assert.deepEqual({ code: sent.code, stdout: sent.stdout }, { code: 0, stdout: "ok\n" });
  assert.equal(server.requests[0]!.body.messages[0].content[0].text, "summarise\na\u0000b");
});

test("a title keeps no control character", async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  server.enqueue({ text: "ok" });
  assert.equal((await sb.run(["run", "--no-stdin", "\tfix\x1b[31m the\rbug\x07 now\nsecond"])).code, 0);
  assert.equal((await sb.sessions())[0]!.title, "fix [31m the bug now");
});
