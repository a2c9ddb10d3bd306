/**
 * Issue 10, items 8 and 9: the store fails loudly and first, and nothing done
 * goes unrecorded. A broken store (a file where a directory belongs, a
 * read-only or full disk, a damaged database) gives every command one line
 * naming the path and the cause, exit 1; a write that fails mid-run ends the
 * turn as an error before anything else happens; `kill -9` at any moment never
 * loses a tool call or result that was printed.
 *
 * Each command's line for a misplaced or damaged store is checked in
 * process, in test/cli/store-failures.test.ts; here the real process gives
 * one of each (exit code, the stdout/stderr split).
 *
 * Read-only and full disks need a tmpfs (`mount`, as root) — or, for
 * read-only, a user that chmod stops; where neither works the test says so
 * and is skipped.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isReplayed } from "../../protocol/kinds.js";
import { openStore } from "../../storage/level-store.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines, type KeenRun } from "./harness.js";
import { startStdio } from "./stdio-client.js";

const server = useMockLLMServer();

type Sandbox = ReturnType<typeof makeSandbox>;
const CONFIG = { stdinGraceMs: 300, retry: { baseDelayMs: 10 } };

/** One line on stderr matching `line`, nothing on stdout, exit 1, no stack trace. */
function assertOneLine(r: KeenRun, line: RegExp, what: string) {
  assert.equal(r.code, 1, `${what}: exit ${r.code}, stderr ${r.stderr}`);
  assert.equal(r.stdout, "", `${what}: stdout`);
  assert.match(r.stderr, line, what);
  assert.equal(r.stderr.split("\n").length, 2, `${what}: one line: ${r.stderr}`);
  assert.doesNotMatch(r.stderr, /\n\s+at |internal error/, `${what}: no stack trace`);
}

/** A tmpfs of `size` mounted at a new directory under the sandbox, unmounted after the file; undefined where mounting is not allowed. */
function mountTmpfs(sb: Sandbox, size: string): string | undefined {
  const dir = join(sb.root, `tmpfs-${size}`);
  mkdirSync(dir);
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "ignore" });
  } catch {
    return undefined;
  }
  after(() => {
    try {
      execFileSync("umount", ["-l", dir], { stdio: "ignore" });
    } catch {
      // already gone
    }
  });
  writeFileSync(join(dir, "config.json"), JSON.stringify(CONFIG));
  return dir;
}

async function firstSession(sb: Sandbox, env: Record<string, string>, text = "stored answer"): Promise<string> {
  server.enqueue({ text });
  // Setting the scene, so through main() in this process (a Keen start less). --sandbox off: a text answer,
  // no tool runs; what the tests look at is the store.
  const r = await sb.main(["run", "--format", "json", "--no-stdin", "--sandbox", "off", "first"], { env });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).session_id;
}

test("a file where the session directory belongs: the run stops before its first request, naming the path; exit 1", async () => {
  const sb = makeSandbox(server.url);
  const sessions = join(sb.home, "sessions");
  writeFileSync(sessions, "not a directory");
  server.enqueue({ text: "never requested" });
  const r = await sb.run(["run", "--format", "json", "--no-stdin", "hi"]);
  assert.equal(r.code, 1, r.stderr);
  const result = JSON.parse(r.stdout);
  const message = `cannot write the session store at ${join(sessions, result.session_id)}: ${sessions} is not a directory (a file is in its place)`;
  assert.deepEqual([result.status, result.is_error, result.errors], ["error", true, [message]]);
  assert.equal(r.stderr, `keen: error: ${message}\n`);
  assert.equal(server.requests.length, 0, "no model request before the session could be written");
  // What reads the session then (show, show --jsonl, run --session, rm) says so in one line: in process.
  const [meta] = await sb.sessions();
  assert.deepEqual([meta!.id, meta!.status], [result.session_id, "error"]);
});

test("a file where the data directory belongs: the run gives one line naming it, exit 1", async () => {
  const sb = makeSandbox(server.url);
  const data = join(sb.root, "xdg-data");
  mkdirSync(data);
  writeFileSync(join(data, "keen"), "not a directory");
  const env = { KEEN_HOME: undefined, XDG_DATA_HOME: data, XDG_CONFIG_HOME: join(sb.root, "xdg-config") };
  const line = (verb: string) => new RegExp(`^keen: cannot ${verb} the session store at ${join(data, "keen", "index")}: ${join(data, "keen")} is not a directory \\(a file is in its place\\)\\n$`);
  assertOneLine(await sb.run(["run", "--no-stdin", "hi"], { env }), line("write"), "run");
  // The other commands' line (sessions list, show, rm, prune, run -c) is checked in process.
  assert.equal(server.requests.length, 0);
});

test("a read-only data directory: every command gives one line naming the path and the cause, exit 1", async (t) => {
  const sb = makeSandbox(server.url);
  let home: string | undefined;
  let cause: RegExp;
  if (process.getuid?.() !== 0) {
    home = sb.home;
    cause = /Permission denied/;
  } else {
    // chmod does not stop root: a tmpfs remounted read-only does.
    home = mountTmpfs(sb, "2m");
    cause = /Read-only file system/;
  }
  if (!home) return t.skip("running as root and cannot mount a tmpfs: no way to make the store read-only here");
  const env = { KEEN_HOME: home };
  const id = await firstSession(sb, env);
  if (home === sb.home) {
    for (const dir of [home, join(home, "index"), join(home, "sessions"), join(home, "sessions", id)]) chmodSync(dir, 0o555);
    after(() => execFileSync("chmod", ["-R", "u+w", home!]));
  } else {
    execFileSync("mount", ["-o", "remount,ro", home]);
  }
  const line = (verb: string, path: string) => new RegExp(`^keen: cannot ${verb} the session store at ${path}: .*${cause.source}`);
  assertOneLine(await sb.run(["run", "--no-stdin", "hi"], { env }), line("write", join(home, "index")), "run");
  assertOneLine(await sb.run(["run", "--session", id, "--no-stdin", "hi"], { env }), line("read", join(home, "index")), "run --session");
  // show and rm open the index as list does; their one line for a store error is checked in
  // process (test/cli/store-failures.test.ts).
  assertOneLine(await sb.run(["sessions", "list"], { env }), line("read", join(home, "index")), "sessions list");
  assert.equal(server.requests.length, 1, "only the first run reached the model");
});

test("a store that fills up mid-run: the turn ends at once with an error result, exit 1; nothing stored is lost", async (t) => {
  const sb = makeSandbox(server.url);
  const home = mountTmpfs(sb, "512k");
  if (!home) return t.skip("cannot mount a tmpfs here (needs root): no way to fill the store");
  const env = { KEEN_HOME: home };
  // The model's own tool call fills the disk; storing its result is the write that fails: the result
  // (8 KB) needs new pages even when the session's database is still open from the write before.
  const fill = `head -c 4000000 /dev/zero > ${join(home, "filler")}; head -c 8192 /dev/zero | tr '\\0' x; echo filled`;
  server.enqueue({ text: "Filling.", toolCalls: [{ name: "bash", input: { command: fill } }] }, { text: "never requested" });
  // --sandbox off: sandboxed, the command could not write into Keen's home at all (it is hidden inside).
  const r = await sb.run(["run", "--headless", "--no-stdin", "--sandbox", "off", "fill it"], { env });
  assert.equal(r.code, 1, r.stderr);
  const lines = parseLines(r.stdout);
  const result = lines.at(-1)!;
  const id = result.session_id;
  const failure = new RegExp(`^cannot write the session store at ${join(home, "sessions", id)}: .*No space left on device`);
  assert.equal(result.kind, "result");
  assert.equal(result.status, "error");
  assert.match(result.errors.at(-1), failure);
  assert.deepEqual(lines.filter((l) => l.kind === "error").map((l) => l.message), [result.errors.at(-1)]);
  assert.equal(r.stderr, `keen: error: ${result.errors.at(-1)}\n`);
  assert.equal(server.requests.length, 1, "the turn did not go on after the failed write");

  assertOneLine(await sb.run(["run", "--session", id, "--no-stdin", "more"], { env }), /^keen: cannot (read|write) the session store at .*No space left on device\n$/, "run --session on a full disk");
  assertOneLine(await sb.run(["sessions", "list"], { env }), /^keen: cannot read the session store at .*No space left on device\n$/, "sessions list on a full disk");
  rmSync(join(home, "filler"));
  // Read in-process (the store under this KEEN_HOME), the entries `sessions show --jsonl` replays:
  // the command's replay is checked in test/e2e/headless-replay.test.ts.
  const stored = (await openStore(home).load(id)).filter((e) => isReplayed(e.kind));
  assert.deepEqual(stored.map((e) => e.kind), ["text", "text", "tool-use"], "what was stored before the failure is intact");
  server.reset();
  server.enqueue({ text: "room again" });
  // --sandbox off: a text answer, no tool runs; what is checked is the stored session.
  const resumed = await sb.run(["run", "--session", id, "--no-stdin", "--sandbox", "off", "more"], { env });
  assert.deepEqual([resumed.code, resumed.stdout], [0, "room again\n"], resumed.stderr);
});

test("a damaged session database: a clear error for it, exit 1", async () => {
  const sb = makeSandbox(server.url);
  const damaged = await firstSession(sb, {}, "one");
  const dir = join(sb.home, "sessions", damaged);
  for (const name of readdirSync(dir)) writeFileSync(join(dir, name), "garbage ".repeat(64));
  const line = new RegExp(`^keen: cannot read the session store at ${dir}: the database is damaged \\(Corruption: [^\\n]+\\)\\n$`);
  assertOneLine(await sb.run(["sessions", "show", damaged]), line, "sessions show");
  assert.deepEqual((await sb.sessions()).map((s) => s.id), [damaged], "still listed");
});

/** The steps of a tool-using run: text, two tool calls per step, then an answer. */
function toolSteps(steps: number) {
  const script = [];
  for (let i = 0; i < steps; i++) {
    script.push({
      text: `step ${i}`,
      delayMs: 2,
      toolCalls: [{ name: "bash", input: { command: `echo a${i}` } }, { name: "list", input: { path: "." } }],
    });
  }
  script.push({ text: "all done", delayMs: 2 });
  return script;
}

/** Runs the tool-using script, `kill -9` once `killAfter` lines were printed; returns what was printed. */
async function killAt(sb: Sandbox, killAfter: number): Promise<{ printed: Record<string, any>[]; killed: boolean }> {
  server.reset();
  server.enqueue(...toolSteps(3));
  let killed = false;
  const r = await sb.run(["run", "--headless", "--no-stdin", "work"], {
    onSpawn: (child: ChildProcess) => {
      let lines = 0;
      child.stdout!.on("data", (chunk: string) => {
        lines += chunk.split("\n").length - 1;
        if (lines >= killAfter && !killed) {
          killed = true;
          child.kill("SIGKILL");
        }
      });
    },
  });
  // Everything keen wrote before it died is in the pipe, so it was printed.
  const complete = r.stdout.slice(0, r.stdout.lastIndexOf("\n") + 1);
  return { printed: parseLines(complete), killed: killed && r.signal === "SIGKILL" };
}

test("kill -9 at many moments of a tool-using run: every tool call and result printed is stored", async () => {
  const sb = makeSandbox(server.url);
  // A whole run prints session-start, the user's text, 3 × (text, 2 tool-use, 2 tool-result), the answer and the result: 19 lines.
  let checked = 0;
  const toResume: string[] = [];
  // Every third line: a step prints five lines (text, two tool-use, two tool-result), so the kills
  // land after the prompt and after each of a step's five positions once (lines 5, 8, 11, 14, 17 are
  // positions 3, 1, 4, 2, 5), at a third of the cost of all seventeen moments (each run starts a sandbox).
  for (let killAfter = 2; killAfter <= 18; killAfter += 3) {
    const { printed, killed } = await killAt(sb, killAfter);
    const id = printed[0]?.conversation_id;
    if (!id) continue;
    const calls = printed.filter((l) => l.kind === "tool-use" || l.kind === "tool-result");
    // Read in-process (sb.show): 17 spawned `sessions show --jsonl` cost more than the runs; the
    // full-disk test above replays through the command.
    const stored = new Set((await sb.show(id)).events.map((l) => `${l.kind} ${l.tool_call_id ?? l.content}`));
    for (const call of calls) {
      assert.ok(stored.has(`${call.kind} ${call.tool_call_id}`), `killed after line ${killAfter}${killed ? "" : " (it had ended)"}: printed ${call.kind} ${call.tool_call_id} is not stored`);
    }
    checked += calls.length;
    // The session left by the kill still resumes: after a step's calls without their results,
    // between a step's two results, and after the last step's results.
    if (killAfter === 5 || killAfter === 11 || killAfter === 17) toResume.push(id);
  }
  // The kills print at least 0 + 2 + 4 + 7 + 9 + 12 tool lines.
  assert.ok(checked >= 30, `only ${checked} printed tool calls and results were checked`);
  assert.equal(toResume.length, 3);
  // One keen stdio resumes the three in turn (a Keen start each cost more than the turns): each loads
  // the killed session from the store as `run --session` does. --sandbox off: text-only answers.
  server.reset();
  for (const _ of toResume) server.enqueue({ text: "resumed" });
  const client = startStdio(["--sandbox", "off"], sb.env, sb.workspace);
  for (const [i, id] of toResume.entries()) {
    client.send({ kind: "resume-session", id: `s${i}`, session: id });
    const resumed = await client.response(`s${i}`);
    assert.equal(resumed.ok, true, resumed.error);
    client.send({ kind: "prompt", id: `p${i}`, text: "go on" });
    const result = await client.next((l) => l.kind === "result");
    assert.deepEqual([result.session_id, result.status, result.text], [id, "success", "resumed"], JSON.stringify(result));
    assert.equal((await client.response(`p${i}`)).ok, true);
  }
  assert.equal((await client.end()).code, 0);
});
