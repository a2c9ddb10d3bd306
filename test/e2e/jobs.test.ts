/**
 * Issue 28 item 3: background jobs through bin/keen with the scripted model, in a git
 * workspace with the sandbox at its default. A dev server started with bash background,
 * read with job_output and ended with job_kill; a job left running ends with the session
 * (keen run, keen stdio at end of input, SIGTERM): no process of it is left.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { sandboxSupport } from "../../app/sandbox/deps.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines, waitForStdout } from "./harness.js";
import { startStdio } from "./stdio-client.js";

const server = useMockLLMServer();
const sandboxed = sandboxSupport().ok;
const GIT_ENV = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.com", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.com" };

function gitSandbox() {
  const sb = makeSandbox(server.url);
  const git = (...args: string[]) => execFileSync("git", args, { cwd: sb.workspace, env: { ...process.env, ...GIT_ENV }, encoding: "utf8" });
  git("init", "-q");
  git("commit", "-q", "--allow-empty", "-m", "init");
  return { sb, git };
}

let serial = 0;
/** Digits no other process's command line holds (a test finds its job's processes by them); `sleep 300.<marker>` takes them. */
const newMarker = () => `${process.pid}${++serial}${Date.now() % 100000}`;

/** Live (not zombie) processes whose command line contains `marker`. */
function processesWith(marker: string): string[] {
  return readdirSync("/proc").filter((pid) => /^\d+$/.test(pid)).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
    } catch {
      return false;
    }
  });
}

function gone(pid: number): boolean {
  try {
    return /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return true;
  }
}

/** A node http server that prints "listening" once it listens (after a pause longer than bash's first-output wait). */
function devServer(marker: string): string {
  const js = `require('http').createServer((q, s) => s.end('hi')).listen(0, '127.0.0.1', function () { console.log('listening on ' + this.address().port) })`;
  return `sleep 2 && exec node -e "${js}" ${marker}`;
}

// The same run also leaves a second job running: `keen run` kills it when the run ends (one Keen for both).
test("a background dev server: started, its output read with job_output, killed with job_kill; a job left running is killed when the run ends; nothing is left after", async () => {
  const { sb, git } = gitSandbox();
  const marker = newMarker();
  const left = newMarker();
  server.enqueue(
    { toolCalls: [{ name: "bash", input: { command: devServer(marker), background: true } }] },
    { toolCalls: [{ name: "job_output", input: { id: "job-1", wait_seconds: 60 } }] },
    { toolCalls: [{ name: "job_kill", input: { id: "job-1" } }] },
    { toolCalls: [{ name: "job_output", input: { id: "job-1" } }] },
    { toolCalls: [{ name: "bash", input: { command: `echo up; exec sleep 300.${left}`, background: true } }] },
    { text: "done" },
  );
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"], { env: GIT_ENV });
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  assert.equal(lines.find((l) => l.kind === "session-start")!.sandboxed, sandboxed);
  assert.ok(lines.find((l) => l.kind === "session-start")!.tools.includes("job_output"));
  assert.match(lines.find((l) => l.kind === "tool-use")!.title, /\(background job\)$/);
  const results = lines.filter((l) => l.kind === "tool-result");
  assert.match(results[0]!.result, /^Started job-1 \(pid \d+\) in the background\.\n\(no new output\)\n\[job-1 is running; read more/);
  assert.equal(results[0]!.is_error, false);
  assert.match(results[1]!.result, /^listening on \d+\n\[job-1 is running/);
  assert.equal(results[1]!.details.state, "running");
  assert.match(results[2]!.result, /^Killed job-1\./);
  assert.equal(results[2]!.details.state, "killed");
  assert.match(results[3]!.result, /\[job-1 was killed\]$/);
  const jobs = lines.filter((l) => l.kind === "job");
  assert.deepEqual(jobs.map((j) => [j.job_id, j.state]), [["job-1", "running"], ["job-1", "killed"], ["job-2", "running"], ["job-2", "killed"]]);
  assert.match(jobs[0]!.command, new RegExp(marker));
  assert.ok(gone(jobs[0]!.pid), "the job's process group leader is gone");
  assert.deepEqual(processesWith(marker), [], "no process of the job is left");
  assert.match(jobs[2]!.command, new RegExp(left));
  assert.ok(gone(jobs[2]!.pid), "the job left running is gone with the run");
  assert.deepEqual(processesWith(left), [], "no process of the job left running is left");
  assert.equal(git("status", "--porcelain", "--untracked-files=all", "--ignored"), "");
});

test("SIGTERM to Keen while the model waits on job_output: the job ends with Keen", async () => {
  const { sb } = gitSandbox();
  const marker = newMarker();
  server.enqueue(
    { toolCalls: [{ name: "bash", input: { command: `exec sleep 300.${marker}`, background: true } }] },
    { toolCalls: [{ name: "job_output", input: { id: "job-1", wait_seconds: 100 } }] },
    { text: "done" },
  );
  let pid = 0;
  const r = await sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", "go"], {
    onSpawn: (child) => void waitForStdout(child, (out) => /"tool-start".*job_output/.test(out)).then(() => child.kill("SIGTERM"), () => {}),
  });
  assert.equal(r.code, 143, r.stderr);
  const jobs = parseLines(r.stdout.split("\n").filter((l) => l.startsWith("{") && l.endsWith("}")).join("\n")).filter((l) => l.kind === "job");
  pid = jobs[0]!.pid;
  assert.ok(gone(pid));
  assert.deepEqual(processesWith(marker), []);
});

// Without bash no job tool is offered (--disallowed-tools bash): a tool filter, checked in process in
// test/cli/front-end-flags.test.ts.

// One `keen stdio` for both: in auto mode a job is left running after its turn; then, narrowed to ask
// mode (a client may narrow, never widen), a background call is asked about and denied: no job starts.
// At the end of input the job left running is killed.
test("keen stdio: kill-job ends one job and is refused for an ended or unknown one; a job left running is killed at the end of input; in ask mode a background bash call is asked about as bash is, denied no job starts", async () => {
  const { sb } = gitSandbox();
  const marker = newMarker();
  const denied = newMarker();
  const stopped = newMarker();
  server.enqueue(
    {
      toolCalls: [
        { name: "bash", input: { command: `exec sleep 300.${stopped}`, background: true } },
        { name: "bash", input: { command: `exec sleep 300.${marker}`, background: true } },
      ],
    },
    { text: "done" },
    { toolCalls: [{ name: "bash", input: { command: `exec sleep 300.${denied}`, background: true } }] }, { text: "done" },
  );
  const client = startStdio(["--permission-mode", "auto"], sb.env, sb.workspace, 60_000);
  client.send({ kind: "prompt", id: "p1", text: "go" });
  const started = await client.next((l) => l.kind === "job" && l.state === "running" && l.command.includes(marker));
  await client.next((l) => l.kind === "result");
  assert.equal(processesWith(marker).length > 0, true, "the job runs after the turn");

  // The user (a client) ends the other job with kill-job: its `job` event (killed) comes before the answer; the other job runs on.
  const victim = client.lines.find((l) => l.kind === "job" && l.command.includes(stopped))!;
  client.send({ kind: "kill-job", id: "k1", job_id: victim.job_id });
  const killed = await client.response("k1");
  assert.deepEqual([killed.ok, killed.data.job_id, killed.data.state], [true, victim.job_id, "killed"]);
  // null (a signal) unsandboxed; sandboxed, bubblewrap passes on its child's end as 128 + SIGTERM.
  assert.ok([null, 143].includes(killed.data.exit_code), String(killed.data.exit_code));
  const ended = client.lines.findIndex((l) => l.kind === "job" && l.job_id === victim.job_id && l.state === "killed");
  assert.ok(ended >= 0 && ended < client.lines.indexOf(killed), "the job event, then the answer");
  assert.ok(gone(victim.pid));
  assert.deepEqual(processesWith(stopped), []);
  assert.equal(processesWith(marker).length > 0, true, "the other job still runs");
  client.send({ kind: "kill-job", id: "k2", job_id: victim.job_id });
  client.send({ kind: "kill-job", id: "k3", job_id: "job-99" });
  assert.deepEqual([(await client.response("k2")).error_code, (await client.response("k3")).error_code], ["job_ended", "unknown_job"]);

  client.send({ kind: "set-permission-mode", id: "m1", mode: "ask" });
  assert.equal((await client.response("m1")).ok, true);
  const from = client.lines.length;
  client.send({ kind: "prompt", id: "p2", text: "go" });
  const asked = await client.next((l) => l.kind === "permission-request", from);
  assert.equal(asked.tool_name, "bash");
  assert.match(asked.title, /\(background job\)$/);
  client.send({ kind: "permission-response", id: "r1", request_id: asked.request_id, decision: "deny" });
  await client.next((l) => l.kind === "result", from);
  const { code, stderr } = await client.end();
  assert.equal(code, 0, stderr);
  assert.deepEqual(client.lines.slice(from).filter((l) => l.kind === "job" && l.pid !== started.pid), [], "the denied call started no job");
  assert.deepEqual(processesWith(denied), []);
  assert.ok(gone(started.pid));
  assert.deepEqual(processesWith(marker), []);
});
