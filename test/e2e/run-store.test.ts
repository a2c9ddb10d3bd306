import { test } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, waitForStdout, type KeenRun } from "./harness.js";

const server = useMockLLMServer();
// The model only answers with text here: no tool runs, so the sandbox plays no role and is off
// (with bash available, every turn would warm it up: ~0.25 s of CPU per Keen).
const TEXT_ONLY = { sandbox: { mode: "off" } };

type Sandbox = ReturnType<typeof makeSandbox>;

/** Starts `keen run --headless --stream-deltas` on a reply that stalls, and resolves once it streams. */
async function holdSession(sb: Sandbox, args: string[]): Promise<{ child: ChildProcess; done: Promise<KeenRun> }> {
  server.enqueue({ text: "streaming then silence", stallAfterChunks: 4 });
  let child!: ChildProcess;
  let streaming!: Promise<string>;
  const done = sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", ...args], {
    onSpawn: (c) => {
      child = c;
      streaming = waitForStdout(c, (out) => out.includes('"text-delta"'));
    },
  });
  await streaming;
  return { child, done };
}

// Four runs: on the 2 cores this suite is sized for, four Keens (and the listings) already overlap their
// store work, so each run's opens of the shared index meet another process's lock (which the store
// waits out, or the run fails with "busy"); eight ran the same race with twice the starts.
const PARALLEL = 4;
test(`${PARALLEL} parallel \`keen run\` on one store, each its own session, while \`sessions list\` runs alongside`, async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  for (let i = 0; i < PARALLEL; i++) server.enqueue({ text: "parallel answer", delayMs: 5 });
  let running = true;
  const listings: Promise<KeenRun[]> = (async () => {
    const seen: KeenRun[] = [];
    // A few listings overlap the runs (each is a Keen start; under load an unbounded loop ran a dozen).
    while (running && seen.length < 3) seen.push(await sb.run(["sessions", "list", "--json"]));
    return seen;
  })();
  const runs = await Promise.all(
    Array.from({ length: PARALLEL }, (_, i) => sb.run(["run", "--format", "json", "--no-stdin", `task ${i}`], { timeoutMs: 60_000 })),
  ).finally(() => (running = false));
  for (const r of runs) {
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.equal(JSON.parse(r.stdout).text, "parallel answer");
  }
  for (const l of await listings) {
    assert.deepEqual([l.code, l.stderr], [0, ""]);
    assert.ok(Array.isArray(JSON.parse(l.stdout)));
  }
  const ids = runs.map((r) => JSON.parse(r.stdout).session_id);
  assert.equal(new Set(ids).size, PARALLEL);
  // Read in-process: that the command prints the same, with short ids, is checked in process
  // (test/cli/sessions.test.ts); the listings above ran the command alongside the runs.
  const sessions = await sb.sessions();
  assert.deepEqual(
    sessions.map((s) => [s.id, s.title, s.status]).sort(),
    ids.map((id, i) => [id, `task ${i}`, "success"]).sort(),
  );
  for (const [i, id] of ids.entries()) {
    const { events } = await sb.show(id);
    assert.deepEqual(
      events.filter((e) => e.kind === "text").map((e) => [e.role, e.content]),
      [["user", `task ${i}`], ["assistant", "parallel answer"]],
    );
  }
  assert.deepEqual(server.unexpected, []);
  assert.equal(server.pending(), 0);
});

test("a second process on a busy session fails fast; reading and listing it while written work", async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  server.enqueue({ text: "first" });
  // Setting the scene, so through main() in this process (a Keen start less); the processes that meet on it are real.
  const first = await sb.main(["run", "--format", "json", "--no-stdin", "start"]);
  const id = JSON.parse(first.stdout).session_id;

  const holder = await holdSession(sb, ["--session", id, "hold it"]);
  const second = await sb.run(["run", "--format", "json", "--no-stdin", "--session", id, "me too"]);
  assert.deepEqual(second, { code: 1, signal: null, stdout: "", stderr: `keen: session ${id} is busy\n` });

  // Read in-process here (that `sessions show --json` prints the same is checked in process,
  // test/cli/sessions.test.ts); the transcript below is the real command reading it while written.
  const shown = await sb.show(id.slice(0, 12));
  assert.deepEqual(shown.session.status, "running");
  assert.deepEqual(
    shown.events.filter((e) => e.kind === "text").map((e) => e.content),
    ["start", "first", "hold it"],
  );
  const text = await sb.run(["sessions", "show", id]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`^${id}  .*  running  .*\\nstart\\n\\n> start\\n\\nfirst\\n\\n> hold it\\n\\n$`));
  const removing = await sb.run(["sessions", "rm", id]);
  assert.deepEqual(removing, { code: 1, signal: null, stdout: "", stderr: `keen: session ${id} is busy; not removed\n` });

  holder.child.kill("SIGINT");
  assert.equal((await holder.done).code, 130);
  server.enqueue({ text: "free again" });
  const third = await sb.run(["run", "--no-stdin", "--session", id, "now?"]);
  assert.deepEqual({ code: third.code, stdout: third.stdout }, { code: 0, stdout: "free again\n" });
  assert.deepEqual(server.unexpected, []);
});

// The case table (--all, --cwd, --limit, prune's filters, rm of several ids, usage errors, the note
// on an empty store) runs in process in test/cli/sessions.test.ts; here the real process prints
// the table, prunes and removes, its notes on stderr.
test("sessions list: a header and aligned columns on stdout, notes on stderr; prune --dry-run; rm; a removed id is a usage error", async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  server.enqueue({ text: "a" });
  // The session to list, made through main() in this process (a Keen start less).
  const a = JSON.parse((await sb.main(["run", "--format", "json", "--no-stdin", "alpha"])).stdout).session_id;

  const listed = await sb.run(["sessions"]);
  assert.deepEqual([listed.code, listed.stderr], [0, ""]);
  const rows = listed.stdout.split("\n").filter(Boolean);
  assert.equal(rows.length, 2, listed.stdout);
  assert.match(rows[0]!, /^ID +UPDATED +STATUS +MODEL +CWD +TITLE$/);
  assert.match(rows[1]!, new RegExp(`^${a.slice(0, 8)}[0-9a-f-]* +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d +success +anthropic/claude-sonnet-5-5 +${sb.workspace} +alpha$`));
  assert.equal(rows[1]!.indexOf("alpha"), rows[0]!.indexOf("TITLE"), "aligned");

  const dry = await sb.run(["sessions", "prune", "--older-than", "0s", "--dry-run"]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, new RegExp(`^${a}  .*  success  alpha\\n$`));
  assert.equal(dry.stderr, "keen: would remove 1 session (dry run)\n");
  const rm = await sb.run(["sessions", "rm", a.slice(0, 13)]);
  assert.deepEqual({ code: rm.code, stdout: rm.stdout, stderr: rm.stderr }, { code: 0, stdout: "", stderr: `keen: removed session ${a}\n` });
  assert.deepEqual(await sb.sessions(), []);
  const gone = await sb.run(["sessions", "show", a]);
  assert.deepEqual(gone, { code: 2, signal: null, stdout: "", stderr: `keen: no session matches '${a}'\n` });
});

test("two processes resuming one session at the same moment: exactly one wins the claim", async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  server.enqueue({ text: "first" });
  // Setting the scene through main() in this process (a Keen start less); the two racers are real processes.
  const id = JSON.parse((await sb.main(["run", "--format", "json", "--no-stdin", "start"])).stdout).session_id;
  // One stalled reply: the winner holds the session until interrupted; the loser never reaches the server.
  server.enqueue({ text: "held", stallAfterChunks: 4 });
  const children: ChildProcess[] = [];
  const runs = [0, 1].map((i) =>
    sb.run(["run", "--format", "json", "--no-stdin", "--session", id, `racer ${i}`], { onSpawn: (c) => void children.push(c) }),
  );
  const loser = await Promise.race(runs);
  assert.deepEqual(loser, { code: 1, signal: null, stdout: "", stderr: `keen: session ${id} is busy\n` });
  while (server.requests.length < 2 && children.some((c) => c.exitCode === null)) await new Promise((r) => setTimeout(r, 20));
  for (const child of children) if (child.exitCode === null) child.kill("SIGINT");
  const [a, b] = await Promise.all(runs);
  assert.deepEqual([a!.code, b!.code].sort(), [1, 130]);
  assert.deepEqual([server.requests.length, server.pending(), server.unexpected], [2, 0, []]);
});

// Without KEEN_HOME, config and data follow XDG_CONFIG_HOME and XDG_DATA_HOME: decided inside Keen
// (app/cli/config.ts keenPaths), checked in process in test/cli/sessions.test.ts.

// The transcript of thinking and of a failed turn, and the usage error of two formats, are checked
// in process (test/cli/sessions.test.ts); a turn whose process was killed needs a real process.
test("sessions show: a turn killed with SIGKILL mid-stream reads [turn interrupted], the session interrupted", async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  // A turn killed with SIGKILL mid-stream leaves no turn-end.
  server.enqueue({ text: "streaming then silence", stallAfterChunks: 4 });
  const killed = await sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", "die"], {
    onSpawn: (child) => void waitForStdout(child, (out) => out.includes('"text-delta"')).then(() => child.kill("SIGKILL"), () => {}),
  });
  assert.equal(killed.signal, "SIGKILL");
  const id = (await sb.sessions())[0]!.id;
  const show = await sb.run(["sessions", "show", id.slice(0, 13)]);
  assert.deepEqual([show.code, show.stderr], [0, ""]);
  const body = show.stdout.split("\n").slice(3).join("\n");
  assert.equal(body, ["> die", "", "[turn interrupted]", "", ""].join("\n"));
  assert.equal((await sb.sessions())[0]!.status, "interrupted");
});
