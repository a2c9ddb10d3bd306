import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRedactor } from "../../app/permissions/redact.js";
import { JOB_OUTPUT_CAP, JobRegistry, type JobInfo } from "../../app/tools/jobs.js";
import { makeTempDir } from "../temp.js";

const cwd = makeTempDir("keen-jobs-");

function start(jobs: JobRegistry, command: string) {
  return jobs.start({ command, script: `exec 2>&1; ${command}`, cwd, env: process.env });
}

/** The process exists and is not a zombie (an orphan's exit may wait for a reaper). */
function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
}

/** Reads until `pattern` shows in what was read so far (each read waits for new output). */
async function readUntil(jobs: JobRegistry, id: string, pattern: RegExp): Promise<string> {
  let seen = "";
  while (!pattern.test(seen)) {
    const read = await jobs.read(id, 10_000);
    seen += read!.output;
    if (read!.job.state !== "running" && !pattern.test(seen)) throw new Error(`ended without ${pattern}: ${seen}`);
  }
  return seen;
}

test("each read returns only the output since the last one (stdout and stderr), then how the job ended", async () => {
  const jobs = new JobRegistry();
  const job = start(jobs, "echo one; echo two >&2; sleep 0.2; echo three; exit 3");
  assert.match(job.id, /^job-\d+$/);
  const all = await readUntil(jobs, job.id, /three/);
  assert.equal(all, "one\ntwo\nthree\n");
  // Nothing new: an empty read, and waiting ends with the job.
  let last = await jobs.read(job.id, 10_000);
  while (last!.job.state === "running") last = await jobs.read(job.id, 10_000);
  assert.equal(last!.output, "");
  assert.equal(last!.job.state, "exited");
  assert.equal(last!.job.exit_code, 3);
  assert.equal(await jobs.read("job-99"), undefined);
});

test("unread output over the cap keeps its newest part and counts the bytes dropped; a read resets the count", async () => {
  const jobs = new JobRegistry();
  const ended = new Promise<void>((resolve) => jobs.onChange((info) => info.state !== "running" && resolve()));
  const job = start(jobs, `head -c ${JOB_OUTPUT_CAP + 5000} /dev/zero | tr '\\0' a; echo; echo end`);
  await ended;
  const read = await jobs.read(job.id);
  assert.equal(read!.output.length, JOB_OUTPUT_CAP);
  assert.ok(read!.output.endsWith("a\nend\n"));
  // Written: the cap plus 5000 a's, "\n" and "end\n"; kept: the last JOB_OUTPUT_CAP characters.
  assert.equal(read!.dropped, 5000 + 1 + 4);
  const again = await jobs.read(job.id);
  assert.deepEqual([again!.output, again!.dropped], ["", 0]);
});

test("known secrets are redacted in a job's output", async () => {
  const secret = "sk-test-jobs-0123456789";
  const jobs = new JobRegistry(createRedactor([secret]));
  const job = start(jobs, `echo "key=${secret}"`);
  const seen = await readUntil(jobs, job.id, /key=/);
  assert.equal(seen, "key=[redacted]\n");
});

test("kill ends the job's whole process group (TERM first) and reports it killed; start and end are reported", async () => {
  const jobs = new JobRegistry();
  const changes: JobInfo[] = [];
  jobs.onChange((info) => changes.push(info));
  const job = start(jobs, "trap 'echo got TERM; exit 143' TERM; sleep 60 & echo $! ; wait");
  const childPid = Number((await readUntil(jobs, job.id, /^\d+\n/)).trim());
  assert.ok(alive(childPid));
  const ended = await jobs.kill(job.id);
  assert.equal(ended!.state, "killed");
  assert.ok(!alive(job.pid!), "the job's shell is gone");
  // The group's SIGKILL at the job's end is sent, not yet acted on: wait for the death (bounded), rather than race it.
  for (const until = Date.now() + 10_000; alive(childPid) && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
  assert.ok(!alive(childPid), "the process it started is gone");
  assert.match((await jobs.read(job.id))!.output, /got TERM/);
  assert.deepEqual(changes.map((c) => [c.id, c.state]), [[job.id, "running"], [job.id, "killed"]]);
  // Killing an ended job changes nothing, and says this kill ended nothing.
  assert.deepEqual([(await jobs.kill(job.id))!.state, (await jobs.kill(job.id))!.already], ["killed", true]);
  assert.equal(await jobs.kill("job-99"), undefined);
});

test("two kills at once: both resolve once the job has ended, and only the first says it ended it", async () => {
  const jobs = new JobRegistry();
  const job = start(jobs, "sleep 60");
  const [first, second] = await Promise.all([jobs.kill(job.id), jobs.kill(job.id)]);
  assert.deepEqual([first!.state, first!.already], ["killed", false]);
  assert.deepEqual([second!.state, second!.already], ["killed", true]);
  assert.ok(!alive(job.pid!), "the second kill resolved only after the job ended");
});

test("kill ends a process of the job that ignores TERM, though the job's shell ended on it", async () => {
  const jobs = new JobRegistry();
  // The subshell's sleep inherits an ignored TERM and holds none of the job's pipes (so the job's
  // end does not wait for it); the job's shell itself ends on the TERM.
  const job = start(jobs, "(trap '' TERM; exec sleep 60 >/dev/null 2>&1 </dev/null) & echo $! ; wait");
  const childPid = Number((await readUntil(jobs, job.id, /^\d+\n/)).trim());
  assert.ok(alive(childPid));
  assert.equal((await jobs.kill(job.id))!.state, "killed");
  for (const until = Date.now() + 10_000; alive(childPid) && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
  assert.ok(!alive(childPid), "the process that ignored TERM is gone too");
});

test("killAll ends every running job; the number running is bounded", async () => {
  const jobs = new JobRegistry();
  const started = Array.from({ length: 8 }, () => start(jobs, "sleep 60"));
  assert.equal(jobs.running(), 8);
  assert.throws(() => start(jobs, "sleep 60"), /8 background jobs are running already/);
  await jobs.killAll();
  assert.equal(jobs.running(), 0);
  for (const job of started) assert.ok(!alive(job.pid!));
  assert.deepEqual(new Set(jobs.list().map((j) => j.state)), new Set(["killed"]));
});

test("a wait ends early on the turn's abort", async () => {
  const jobs = new JobRegistry();
  const job = start(jobs, "sleep 60");
  const abort = new AbortController();
  const reading = jobs.read(job.id, 120_000, abort.signal);
  abort.abort();
  const read = await reading;
  assert.deepEqual([read!.output, read!.job.state], ["", "running"]);
  await jobs.killAll();
});
