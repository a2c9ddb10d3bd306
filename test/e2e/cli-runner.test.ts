/**
 * The CLI runner end to end: `keen run --runner cli` and `keen stdio` drive a
 * fake `claude` (test/fakes/fake-claude.mjs) that replays recorded stream-json
 * and records its argv, stdin and pid. No network, no real `claude`.
 *
 * Cases about what Keen makes of claude's stream, exit and argv run Keen through main() in this
 * process (`box.main`, a Keen start less each), the fake claude still a real child process: its
 * process group, its stderr, its exit code. The real `keen` process is kept where the process
 * itself is the point: piped stdin past the argv limit, SIGINT, and `keen stdio`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { waitForStdout } from "./harness.js";
import { startStdio } from "./stdio-client.js";
import { RELAY_TOOL, alive, brief, collapse, jsonl, sandbox } from "./cli-runner-sandbox.js";

// One run for both (a Keen start each cost most of the test): the prompt alone on claude's stdin,
// exactly, is checked by the resumed turns below ("say it again", the --cwd hand-over).
test("keen run --runner cli (text): the prompt and piped stdin go to claude's stdin past the argv limit (a 300 KiB diff), the argv is claude's, the answer is printed, no API key needed", async () => {
  const box = sandbox("text-thinking");
  const diff = `diff --git a/x b/x\n${"+a line of the diff\n".repeat(16_000)}`;
  const r = await box.run(["run", "--runner", "cli", "--model", "anthropic/claude-sonnet-4-5", "review this"], { stdin: diff });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "Hello! How can I help you today?\n");
  const [call] = box.runs();
  assert.ok(call!.stdin.startsWith("review this") && call!.stdin.includes(diff.trimEnd()), "the prompt and the whole diff");
  assert.ok(call!.argv.every((arg) => arg.length < 1000), "nothing of the prompt in argv");
  assert.equal(call!.cwd, box.workspace);
  assert.deepEqual(call!.argv.slice(0, 8), ["-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages", "--model", "claude-sonnet-4-5", "--session-id"]);
  assert.match(call!.argv[8]!, /^[0-9a-f-]{36}$/);
  assert.equal(call!.argv.length, 9, "auto without skipPermissions leaves the CLI's own permission mode");
});

test("--headless --stream-deltas: the whole event sequence; the stored session; the next turn resumes the CLI session", async () => {
  const box = sandbox("tool-bash,resume-2", { skipPermissions: true, flags: ["--append-system-prompt", "be brief"] });
  const r = await box.main(["run", "--runner", "cli", "--headless", "--stream-deltas", "--no-stdin", "run echo hi"]);
  assert.equal(r.code, 0, r.stderr);
  const events = jsonl(r.stdout);
  const kinds = collapse(events.map(brief));
  assert.deepEqual(kinds, ["session-start", "text", "tool-use:Bash", "tool-start:Bash", "tool-result:Bash", "text-delta", "content-end", "text", "result"]);
  const result = events.at(-1)!;
  assert.equal(result.text, "The command printed: hi");
  assert.equal(result.status, "success");
  assert.equal(result.num_turns, 2);
  assert.equal(result.cost_usd, 0.19052, "the CLI's own cost");
  assert.deepEqual(result.context, { used: 19055 + 6, window: 1_000_000 }, "the last request's usage against the window the CLI reports");
  const first = box.runs()[0]!;
  assert.deepEqual(first.argv.slice(9), ["--permission-mode", "bypassPermissions", "--dangerously-skip-permissions", "--append-system-prompt", "be brief"]);

  const sessionId = result.session_id;
  const stored = await box.show(sessionId);
  const turnEnd = stored.events.find((e) => e.kind === "turn-end");
  assert.equal(turnEnd?.runner, "cli");
  assert.equal(turnEnd?.cli_session_id, first.argv[8]);
  assert.deepEqual(stored.events.filter((e) => e.kind === "text").map((e) => e.content), ["run echo hi", "The command printed: hi"]);

  // No --runner: the session remembers it.
  const again = await box.main(["run", "--session", sessionId, "--format", "json", "--no-stdin", "say it again"]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(JSON.parse(again.stdout).text, "Hello! How can I help you today?");
  const second = box.runs()[1]!;
  assert.deepEqual(second.argv.slice(7, 9), ["--resume", first.argv[8]]);
  assert.equal(second.stdin, "say it again");
});

test("an error result with exit 0 is an error (exit 1); max turns with exit 1 and no answer is max_turns (exit 3)", async () => {
  const box = sandbox("error-result,max-turns:1,max-turns:1");
  const r = await box.main(["run", "--runner", "cli", "--format", "json", "--no-stdin", "hi"]);
  assert.equal(r.code, 1);
  const result = JSON.parse(r.stdout);
  assert.equal(result.status, "error");
  assert.ok(result.errors.includes("API Error: 500 overloaded"), r.stdout);
  const m = await box.main(["run", "--runner", "cli", "--format", "json", "--no-stdin", "--max-turns", "2", "keep going"]);
  assert.equal(m.code, 3, m.stderr);
  assert.equal(JSON.parse(m.stdout).status, "max_turns");
  assert.deepEqual(box.runs()[1]!.argv.slice(-2), ["--max-turns", "2"]);
});

test("an exit without a result is an error carrying the stderr tail, an `error` event with error_code runner", async () => {
  const box = sandbox("cut:1");
  const r = await box.main(["run", "--runner", "cli", "--headless", "--no-stdin", "hi"], { env: { FAKE_CLAUDE_STDERR: "boom: the CLI fell over\n" } });
  assert.equal(r.code, 1);
  const events = jsonl(r.stdout);
  assert.deepEqual(events.filter((e) => e.kind === "error").map((e) => e.error_code), ["runner"]);
  const result = events.at(-1)!;
  assert.deepEqual([result.kind, result.status], ["result", "error"]);
  assert.match(result.errors.join("\n"), /exited with code 1 without a result: boom: the CLI fell over/);
});

// A bad --runner on every front end and a project config that sets the runner are usage errors
// checked in process (test/cli/front-end-flags.test.ts); here a missing binary, in process too.
test("usage errors before any session: a missing binary names its path", async () => {
  const box = sandbox("text-thinking", { path: "/nowhere/claude" });
  const r = await box.main(["run", "--runner", "cli", "--no-stdin", "hi"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /\/nowhere\/claude/);
  assert.deepEqual(await box.sessions(), []);
});

test("the CLI's timeout kills its process group and ends the turn as an error", async () => {
  // Long enough for the fake to start and log itself on a loaded machine.
  const box = sandbox("hang", { timeoutMs: 2000 });
  const r = await box.main(["run", "--runner", "cli", "--format", "json", "--no-stdin", "hi"]);
  assert.equal(r.code, 1);
  assert.match(JSON.parse(r.stdout).errors.join("\n"), /timed out after 2.0s/);
  const [call] = box.runs();
  assert.ok(!alive(call!.pid) && !alive(call!.grandchild!), "the CLI and its children are gone");
});

test("SIGINT kills the CLI's process group; the turn ends interrupted", async () => {
  const box = sandbox("hang");
  // The fake logs its run (and its grandchild) before it hangs: that is when claude is surely running.
  const started = async () => {
    while (box.runs().length === 0) await new Promise((r) => setTimeout(r, 20));
  };
  const r = await box.run(["run", "--runner", "cli", "--headless", "hi"], {
    onSpawn: (child) => void waitForStdout(child, (s) => s.includes('"kind":"text"')).then(started).then(() => child.kill("SIGINT"), () => {}),
  });
  assert.equal(r.code, 130, r.stderr);
  assert.equal(jsonl(r.stdout).at(-1)!.status, "interrupted");
  const [call] = box.runs();
  assert.ok(!alive(call!.pid) && !alive(call!.grandchild!), "the CLI and its children are gone");
});

test("keen stdio --runner cli: two prompts, one CLI session resumed; the same events as keen run", async () => {
  const box = sandbox("text-thinking,resume-2");
  const client = startStdio(["--runner", "cli", "--permission-mode", "accept-edits"], box.env, box.workspace);
  client.send({ kind: "prompt", id: "p1", text: "say hi" });
  const first = await client.next((l) => l.kind === "result");
  assert.equal(first.text, "Hello! How can I help you today?");
  client.send({ kind: "prompt", id: "p2", text: "say it again" });
  await client.response("p2");
  const { code } = await client.end();
  assert.equal(code, 0);
  const [a, b] = box.runs();
  assert.deepEqual(a!.argv.slice(9, 11), ["--permission-mode", "acceptEdits"]);
  assert.deepEqual(a!.argv.slice(13), ["--permission-prompt-tool", RELAY_TOOL], "accept-edits: the CLI's asks (bash) come to Keen too");
  assert.deepEqual(b!.argv.slice(7, 9), ["--resume", a!.argv[8]]);
  const kinds = collapse(client.lines.filter((l) => l.kind !== "response").map(brief));
  assert.deepEqual(kinds.slice(0, 10), ["session-start", "text", "thinking-start", "thinking-delta", "thinking-end", "text-delta", "content-end", "thinking", "text", "result"]);
  assert.deepEqual(kinds.slice(10), ["text", "thinking-start", "thinking-delta", "thinking-end", "text-delta", "content-end", "thinking", "text", "result"]);
});

test("--cwd elsewhere: a new CLI session there, its prompt carrying the stored conversation, said on stderr", async () => {
  const box = sandbox("tool-bash,text-thinking,resume-2");
  const r = await box.main(["run", "--runner", "cli", "--format", "json", "--no-stdin", "run echo hi"]);
  assert.equal(r.code, 0, r.stderr);
  const sessionId = JSON.parse(r.stdout).session_id;
  const elsewhere = join(box.root, "elsewhere");
  mkdirSync(elsewhere);
  const moved = await box.main(["run", "--session", sessionId, "--cwd", elsewhere, "--no-stdin", "and now?"]);
  assert.equal(moved.code, 0, moved.stderr);
  assert.match(moved.stderr, /starting a new one in .*elsewhere with the stored conversation/);
  const [first, second] = box.runs();
  assert.equal(second!.cwd, elsewhere);
  assert.equal(second!.argv[7], "--session-id");
  assert.notEqual(second!.argv[8], first!.argv[8]);
  assert.equal(second!.stdin, `The conversation so far (it ran in ${box.workspace}):\n\nUser: run echo hi\n\nAssistant: The command printed: hi\n\n---\n\nand now?`);
  // The session now lives there: the next turn resumes the new CLI session.
  const next = await box.main(["run", "--session", sessionId, "--no-stdin", "again"]);
  assert.equal(next.code, 0, next.stderr);
  assert.deepEqual(box.runs()[2]!.argv.slice(7, 9), ["--resume", second!.argv[8]]);
});

test("max turns with no answer in a headless run: one more CLI turn, tools off, with the final-step prompt, gives the best guess", async () => {
  const box = sandbox("max-turns:1,resume-2");
  const r = await box.main(["run", "--runner", "cli", "--format", "json", "--no-stdin", "--max-turns", "2", "keep going"]);
  assert.equal(r.code, 0, r.stderr);
  const result = JSON.parse(r.stdout);
  assert.equal(result.status, "max_turns");
  assert.equal(result.text, "Hello! How can I help you today?");
  const [first, second] = box.runs();
  assert.deepEqual(second!.argv.slice(7, 9), ["--resume", first!.argv[8]]);
  assert.deepEqual(second!.argv.slice(9, 11), ["--max-turns", "1"]);
  assert.equal(second!.argv[11], "--disallowedTools");
  assert.ok(second!.argv[12]!.split(",").includes("Bash"));
  assert.match(second!.stdin, /^FINAL STEP/);
});
