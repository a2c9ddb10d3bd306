import { test } from "node:test";
import assert from "node:assert/strict";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";

// Secrets in what Keen prints before or instead of a turn (a provider's 401, a key that cannot be sent,
// a usage error), in this process through the same main() the bundle runs (test/cli/in-process.ts):
// the redaction is main()'s, and each case costs milliseconds instead of a Keen start.
// test/e2e/secrets.test.ts keeps the tools that print secrets and the spawned session commands.

const server = useMockLLMServer();

const KEY = "sk-ant-api03-KEEN-TEST-KEY-0123456789abcdef";
const GH = "ghp_keentest0123456789abcdefABCDEF";
const HEADER = "hdr-secret-keen-test-value";
const PIECES = [KEY, GH, HEADER, "KEEN-TEST-KEY", "keentest0123456789", "secret-keen-test"];
// Text turns only: no tool runs, so the sandbox plays no role (and must not warm up in this process).
const run = ["run", "--no-stdin", "--sandbox", "off"];

function sandbox() {
  const sb = makeInProcessSandbox(server, { providers: { anthropic: { headers: { "x-gateway-auth": HEADER } } } });
  Object.assign(sb.env, { ANTHROPIC_API_KEY: KEY, GITHUB_TOKEN: GH });
  return sb;
}

/** What a run showed, and what the model received. */
const shown = (r: { stdout: string; stderr: string }) => [r.stdout, r.stderr, JSON.stringify(server.requests.map((q) => q.body))].join("\n");

/** Every stored view: the sessions and their events as stored, and what `keen sessions list` and `show` print, in every format. */
async function storedViews(sb: ReturnType<typeof sandbox>) {
  const keen = async (args: string[]) => {
    const out = await sb.keen(args);
    assert.equal(out.code, 0, out.stderr);
    return [out.stdout, out.stderr];
  };
  const sessions = await sb.sessions();
  const views = [JSON.stringify(sessions)];
  for (const { id } of sessions) {
    for (const flags of [[], ["--json"], ["--jsonl"]]) views.push(...(await keen(["sessions", "show", id, ...flags])));
  }
  views.push(...(await keen(["sessions", "list"])), ...(await keen(["sessions", "list", "--json"])));
  return views.join("\n");
}

function assertNoSecret(text: string) {
  for (const piece of PIECES) assert.ok(!text.includes(piece), `"${piece}" leaked:\n${text.slice(Math.max(0, text.indexOf(piece) - 300), text.indexOf(piece) + 100)}`);
}

test("a 401 whose message quotes the key and a header shows neither, on stderr, stdout or in the store", async () => {
  const sb = sandbox();
  server.enqueue({
    kind: "http-error", status: 401,
    body: { type: "error", error: { type: "authentication_error", message: `invalid x-api-key: ${KEY} (x-gateway-auth: ${JSON.stringify(HEADER)})` } },
  });
  const r = await sb.keen([...run, "--headless", "hi"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /invalid x-api-key: \[redacted\]/);
  assert.equal(server.requests[0]!.headers["x-api-key"], KEY, "the real key was sent");
  assert.equal(server.requests[0]!.headers["x-gateway-auth"], HEADER);
  assertNoSecret(`${shown(r)}\n${await storedViews(sb)}`);
});

test("a provider key with a newline cannot even be sent: neither the whole key nor a line of it is shown", async () => {
  const sb = sandbox();
  const second = "second-line-of-the-key-0987654321";
  const bad = await sb.keen([...run, "--headless", "hi"], { env: { ANTHROPIC_API_KEY: `${KEY}\n${second}` } });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /invalid header value/);
  assert.match(bad.stderr, /\[redacted\]/);
  const seen = shown(bad) + (await storedViews(sb));
  assertNoSecret(seen);
  assert.ok(!seen.includes(second), second);
});

test("an error Keen prints before the run starts does not quote a key either", async () => {
  const sb = sandbox();
  const r = await sb.keen([...run, "--model", `${GH}/model`, "hi"]);
  assert.deepEqual([r.code, r.stdout], [2, ""]);
  assert.match(r.stderr, /^keen: unknown provider "\[redacted\]" in model "\[redacted\]\/model"/);
  assertNoSecret(r.stderr);
});
