import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { KEEN_BIN, makeSandbox, parseLines } from "./harness.js";

const server = useMockLLMServer();

// OSC 0 (window title), OSC 52 (clipboard write), CSI (clear screen, colour), a lone CR, a bidi override.
const TITLE = "\x1b]0;pwned\x07fix \x1b]52;c;ZXZpbA==\x07 the bug";
const ANSWER = "done \x1b[2J\x1b[31mred\x1b[0m\rover \u202Etxt.exe";
const DRIVES_TERMINAL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e]|\r(?!\n)/;

test("sessions list and show print a hostile title, answer and tool output inert; JSON keeps the exact text", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: "printf '\\033]0;tool-title\\007\\033[1A'" } }] }, { text: ANSWER });
  const r = await sb.run(["run", "--no-stdin", TITLE]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `${ANSWER}\n`, "piped text output keeps the model's exact text");
  const list = await sb.run(["sessions", "list"]);
  const [session] = await sb.sessions();
  assert.equal(session!.title, "]0;pwned fix ]52;c;ZXZpbA== the bug", "a title keeps no control character");
  const show = await sb.run(["sessions", "show", session!.id]);
  for (const out of [list, show]) {
    assert.equal(out.code, 0, out.stderr);
    assert.doesNotMatch(out.stdout, DRIVES_TERMINAL);
  }
  assert.match(list.stdout, /\]0;pwned fix \]52;c;ZXZpbA== the bug\n$/);
  assert.match(show.stdout, /␛\]0;tool-title␇␛\[1A/);
  assert.match(show.stdout, /done ␛\[2J␛\[31mred␛\[0m␍over <U\+202E>txt\.exe/);
  const jsonl = parseLines((await sb.run(["sessions", "show", session!.id, "--jsonl"])).stdout);
  assert.equal(jsonl.find((l) => l.kind === "text" && l.role === "assistant")!.content, ANSWER);
  rmSync(sb.root, { recursive: true, force: true });
});

test("an error message with escape sequences reaches stderr inert", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ kind: "http-error", status: 400, body: { type: "error", error: { type: "invalid_request_error", message: "bad \x1b]0;pwned\x07\x1b[2J" } } });
  // --sandbox off: the turn only talks, to a failing model (a turn with bash available warms the sandbox up).
  const r = await sb.run(["run", "--headless", "--no-stdin", "--sandbox", "off", "hi"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /keen: error: 400 invalid_request_error: bad ␛\]0;pwned␇␛\[2J/);
  assert.doesNotMatch(r.stderr, DRIVES_TERMINAL);
  assert.equal(parseLines(r.stdout).find((l) => l.kind === "error")!.message, "400 invalid_request_error: bad \x1b]0;pwned\x07\x1b[2J");
  rmSync(sb.root, { recursive: true, force: true });
});

test("text output on a terminal makes the model's escape sequences visible", { skip: spawnSync("script", ["--version"]).status !== 0 && "needs script(1) from util-linux for a pseudo-terminal" }, async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ text: ANSWER });
  // script(1) gives keen a pseudo-terminal as stdout; its own output is what the terminal received.
  // --sandbox off: the turn only talks (a turn with bash available warms the sandbox up).
  const r = await sb.run(["-qec", `${KEEN_BIN} run --no-stdin --sandbox off hi`, "/dev/null"], { bin: "script" });
  assert.equal(r.code, 0, r.stderr);
  // The terminal is stderr too: the session note follows the answer.
  assert.match(r.stdout.replace(/\r\n/g, "\n"), /^done ␛\[2J␛\[31mred␛\[0m␍over <U\+202E>txt\.exe\nkeen: done · session /);
  rmSync(sb.root, { recursive: true, force: true });
});

test("a usage error that quotes the user's input is one inert line", async () => {
  const sb = makeSandbox(server.url);
  const r = await sb.run(["sessions", "show", "\x1b]0;pwned\x07"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /␛\]0;pwned␇/);
  assert.doesNotMatch(r.stderr, DRIVES_TERMINAL);
  rmSync(sb.root, { recursive: true, force: true });
});
