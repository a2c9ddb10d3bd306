import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";

// --record, --replay and KEEN_RECORD through `keen run` in this process (test/cli/in-process.ts), text
// turns only, so --sandbox off. test/e2e/record-replay.test.ts keeps the real process: multi-step
// tool runs recorded and replayed, keen stdio, a mismatch's exit code and stderr, a cassette of
// another version.

const server = useMockLLMServer();

/** Replays need neither the mock nor a key: the key is gone and the base URL refuses connections. */
const REPLAY_ENV = { ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: "http://127.0.0.1:9", OPENAI_API_KEY: undefined };

function used() {
  assert.deepEqual(server.unexpected, []);
  assert.deepEqual(server.rejected, []);
  assert.equal(server.pending(), 0);
}

async function record(text: string, prompt: string, name: string) {
  const sb = makeInProcessSandbox(server);
  const cassette = join(sb.root, name);
  server.enqueue({ text });
  const r = await sb.keen(["run", "--no-stdin", "--model", "anthropic/claude-test", "--sandbox", "off", "--record", cassette, prompt]);
  assert.equal(r.code, 0, r.stderr);
  used();
  const replay = (args: string[]) => sb.keen(["run", "--no-stdin", "--replay", cassette, "--replay-speed", "0", "--sandbox", "off", ...args], { env: REPLAY_ENV });
  return { sb, cassette, replay };
}

test("a replay offering other tools fails naming them (exit 1); --replay-loose serves a mismatch anyway; with no prompt the recorded one is sent", async () => {
  const { replay } = await record("Hello.", "say hello", "c.jsonl");
  const tools = await replay(["--disallowed-tools", "bash", "say hello"]);
  assert.equal(tools.code, 1);
  assert.match(tools.stderr, /replay: request 1 does not match .*: tools: the cassette offered \[bash, .*\], this run offers \[read_file, .*\] \(not offered now: bash, job_output, job_kill\)/);

  const loose = await replay(["--replay-loose", "say goodbye"]);
  assert.equal(loose.code, 0, loose.stderr);
  assert.equal(loose.stdout, "Hello.\n");
  assert.match(loose.stderr, /replay: request 1 differs from .*: user message 1: .* served anyway \(--replay-loose\)/);

  const bare = await replay(["--permission-mode", "auto"]);
  assert.equal(bare.code, 0, bare.stderr);
  assert.equal(bare.stdout, "Hello.\n");
});

test("a failing run's cassette reproduces the failure", async () => {
  const sb = makeInProcessSandbox(server);
  const cassette = join(sb.root, "fail.jsonl");
  server.enqueue({ kind: "http-error", status: 400 });
  const r = await sb.keen(["run", "--no-stdin", "--format", "json", "--model", "anthropic/claude-test", "--sandbox", "off", "--record", cassette, "break"]);
  assert.equal(r.code, 1);
  const p = await sb.keen(["run", "--no-stdin", "--format", "json", "--replay", cassette, "--replay-speed", "0", "--sandbox", "off", "break"], { env: REPLAY_ENV });
  assert.equal(p.code, 1);
  assert.deepEqual(JSON.parse(p.stdout).errors, JSON.parse(r.stdout).errors);
  assert.match(JSON.parse(p.stdout).errors[0], /^400 invalid_request_error: mock HTTP 400$/);
});

test("--replay-speed 1 keeps the recorded pacing", async () => {
  const sb = makeInProcessSandbox(server);
  const cassette = join(sb.root, "slow.jsonl");
  server.enqueue({ text: "one two three four five six", delayMs: 100 });
  const r = await sb.keen(["run", "--no-stdin", "--model", "anthropic/claude-test", "--sandbox", "off", "--record", cassette, "slowly"]);
  assert.equal(r.code, 0, r.stderr);
  const chunks = readFileSync(cassette, "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((l) => l.type === "chunk");
  const span = Math.max(...chunks.map((l) => l.ms));
  assert.ok(span >= 800, `the recording spans ${span} ms`);
  const started = Date.now();
  const p = await sb.keen(["run", "--no-stdin", "--replay", cassette, "--replay-speed", "1", "--sandbox", "off", "slowly"], { env: REPLAY_ENV });
  assert.equal(p.code, 0, p.stderr);
  assert.equal(p.stdout, "one two three four five six\n");
  assert.ok(Date.now() - started >= span, `replay took ${Date.now() - started} ms, the recording ${span} ms`);
});

test("KEEN_RECORD records like --record", async () => {
  const sb = makeInProcessSandbox(server);
  const viaEnv = join(sb.root, "env.jsonl");
  server.enqueue({ text: "Recorded." });
  const rec = await sb.keen(["run", "--no-stdin", "--model", "anthropic/claude-test", "--sandbox", "off", "hi"], { env: { KEEN_RECORD: viaEnv } });
  assert.equal(rec.code, 0, rec.stderr);
  assert.ok(existsSync(viaEnv));
  assert.match(readFileSync(viaEnv, "utf8"), /"type":"end"/);
  used();
});
