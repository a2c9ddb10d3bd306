import { test } from "node:test";
import assert from "node:assert/strict";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { inProcess } from "../cli/in-process.js";
import { makeSandbox, parseLines } from "./harness.js";

const server = useMockLLMServer();

const KEY = "sk-ant-api03-KEEN-TEST-KEY-0123456789abcdef";
const GH = "ghp_keentest0123456789abcdefABCDEF";
const HEADER = "hdr-secret-keen-test-value";
const PIECES = [KEY, GH, HEADER, "KEEN-TEST-KEY", "keentest0123456789", "secret-keen-test"];

function sandbox() {
  const sb = makeSandbox(server.url, { providers: { anthropic: { headers: { "x-gateway-auth": HEADER } } } });
  Object.assign(sb.env, { ANTHROPIC_API_KEY: KEY, GITHUB_TOKEN: GH });
  return sb;
}

/** What a run showed: its stdout and stderr, and what the model received (read before the next server.reset()). */
function shown(run: { stdout: string; stderr: string }) {
  return [run.stdout, run.stderr, JSON.stringify(server.requests.map((r) => r.body))].join("\n");
}

const SHOW_FORMATS = [[], ["--json"], ["--jsonl"]];

/**
 * Every stored view: every session and its events as stored, and what `keen sessions list` (both
 * formats) and `keen sessions show` (every format, every session) print. The commands run in this
 * process through the same main() the bundle runs (test/cli/in-process.ts), with the sandbox's
 * environment, whose secrets they redact with: fifteen Keen starts less per file (~0.5 s of CPU
 * each). The last test runs the commands as processes.
 */
async function storedViews(sb: ReturnType<typeof sandbox>) {
  const keen = async (args: string[]) => {
    const out = await inProcess(args, sb.env, sb.workspace);
    assert.equal(out.code, 0, out.stderr);
    return [out.stdout, out.stderr];
  };
  const sessions = await sb.sessions();
  const views = [JSON.stringify(sessions)];
  for (const { id } of sessions) {
    views.push(JSON.stringify(await sb.show(id)));
    for (const flags of SHOW_FORMATS) views.push(...(await keen(["sessions", "show", id, ...flags])));
  }
  views.push(...(await keen(["sessions", "list"])), ...(await keen(["sessions", "list", "--json"])));
  return views.join("\n");
}

function assertNoSecret(text: string) {
  for (const piece of PIECES) assert.ok(!text.includes(piece), `"${piece}" leaked:\n${text.slice(Math.max(0, text.indexOf(piece) - 300), text.indexOf(piece) + 100)}`);
}

test("a tool that prints the key (from Keen's /proc environ or a file) never shows it: not to the model, stdout, the store or stderr", async () => {
  const sb = sandbox();
  writeFileSync(join(sb.workspace, "notes.txt"), `gateway ${HEADER}\nkey ${KEY}\n`);
  const calls = [
    { name: "bash", input: { command: "tr '\\0' '\\n' < /proc/$PPID/environ | grep -E 'KEY|TOKEN'" } },
    { name: "bash", input: { command: "cat notes.txt; cat notes.txt | base64 -w0 | base64 -d" } },
    { name: "read_file", input: { path: "notes.txt" } },
    { name: "grep", input: { pattern: "sk-ant" } },
  ];
  const seen: string[] = [];
  for (const args of [["--headless"], ["--format", "json"]]) {
    server.reset();
    server.enqueue({ toolCalls: calls }, { text: `The key is ${KEY} and the token ${GH}.` });
    // --sandbox off: the redactor is tested where bash can read Keen's environment at all (sandboxed it cannot).
    const r = await sb.run(["run", ...args, "--no-stdin", "--sandbox", "off", "print the key"]);
    assert.equal(r.code, 0, r.stderr);
    seen.push(shown(r));
    const results = server.requests[1]!.body.messages.at(-1).content.filter((b: { type: string }) => b.type === "tool_result");
    const texts = results.map((b: any) => (typeof b.content === "string" ? b.content : b.content.map((c: any) => c.text).join("")));
    assert.match(texts[0], /ANTHROPIC_API_KEY=\[redacted\]/, "the tool really read Keen's environment");
    assert.match(texts[0], /GITHUB_TOKEN=\[redacted\]/);
    assert.match(texts[1], /gateway \[redacted\]\nkey \[redacted\]/);
    assert.match(texts[2], /key \[redacted\]/);
    const answer = args[0] === "--headless" ? parseLines(r.stdout).at(-1)!.text : JSON.parse(r.stdout).text;
    assert.equal(answer, "The key is [redacted] and the token [redacted].");
  }
  server.reset();
  server.enqueue({ text: `The key is ${KEY}` });
  // --sandbox off: a text answer, no tool runs (with bash available the sandbox would warm up for nothing).
  const text = await sb.run(["run", "--no-stdin", "--sandbox", "off", "hi"]);
  assert.deepEqual([text.code, text.stdout], [0, "The key is [redacted]\n"]);
  seen.push(shown(text), await storedViews(sb));
  assert.equal((await sb.sessions()).length, 3);
  assertNoSecret(seen.join("\n"));
  rmSync(sb.root, { recursive: true, force: true });
});

// A 401 that quotes the key, a provider key with a newline (it cannot even be sent) and a usage error
// that would quote a key run in process: test/cli/secrets.test.ts.
test("a secret with a newline in it, printed by a tool from Keen's own environment: neither the whole value nor a line of it is shown", async () => {
  const sb = sandbox();
  const second = "second-line-of-the-key-0987654321";
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: "tr '\\0' '\\n' < /proc/$PPID/environ" } }] }, { text: "done" });
  const printed = await sb.run(["run", "--headless", "--no-stdin", "--sandbox", "off", "hi"], { env: { MY_SERVICE_TOKEN: `  ${second}\nthird-line-of-the-token-5555\n` } });
  assert.equal(printed.code, 0, printed.stderr);
  assert.match(JSON.stringify(server.requests[1]!.body), /MY_SERVICE_TOKEN=\[redacted\]/);
  const seen = shown(printed) + (await storedViews(sb));
  assertNoSecret(seen);
  for (const piece of [second, "third-line-of-the-token"]) assert.ok(!seen.includes(piece), piece);
  rmSync(sb.root, { recursive: true, force: true });
});

test("sessions list and show also redact what was stored before the value was known as a secret", async () => {
  const sb = sandbox();
  const later = "value-that-became-a-secret-42";
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: `echo ${later}` } }] }, { text: `it printed ${later}` });
  // --sandbox off: bash only puts the value in the store; where it runs plays no role here.
  const r = await sb.run(["run", "--no-stdin", "--sandbox", "off", `print ${later}`]);
  assert.equal(r.code, 0, r.stderr);
  const env = { DEPLOY_TOKEN: later };
  // `sessions list --json` and `sessions show --jsonl` as processes; the other formats in this process
  // (test/cli/in-process.ts), which redacts with the same environment: three Keen starts less.
  const [session] = JSON.parse((await sb.run(["sessions", "list", "--json"], { env })).stdout);
  assert.equal(session.title, "print [redacted]");
  const views = [(await sb.run(["sessions", "show", session.id, "--jsonl"], { env })).stdout];
  for (const args of [["sessions", "list"], ["sessions", "show", session.id], ["sessions", "show", session.id, "--json"]]) {
    const view = await inProcess(args, { ...sb.env, ...env }, sb.workspace);
    assert.equal(view.code, 0, view.stderr);
    views.push(view.stdout);
  }
  for (const view of views) {
    assert.ok(!view.includes(later), view);
    assert.match(view, /\[redacted\]/);
  }
  rmSync(sb.root, { recursive: true, force: true });
});
