// Runs the end-to-end suite (test/e2e, test/build) as `npm run test:e2e`; arguments: test files to
// run (default: all) and node:test flags such as --test-name-pattern=…, e.g.
// `node scripts/test-e2e.mjs test/e2e/help.test.ts`.
//
// Files share processes. Node plus tsx cost ~0.6 s of CPU to start and each process compiles the
// helpers again; one process per file (`node --test`) spent a minute of CPU on that alone. Here
// KEEN_E2E_JOBS (default 2, the cores this suite is sized for) worker processes
// (run-shard.mjs) each take the next file from one queue, slowest known first, and run it inside a
// suite of its own, so its top-level hooks stay its own. Files in SOLO get a fresh process each.
// A worker that dies mid-file fails that file, and a new worker takes the rest of the queue.
// tsx keeps its compile cache (in the usual temp directory, across runs): workers start with that
// TMPDIR and switch to the run's once tsx is loaded.
//
// One clean-up check over all of it: the run gets a temp directory of its own (TMPDIR) and a
// marker in its environment. Afterwards the directory must be empty and no process carrying the
// marker may be alive: whatever a test, Keen, the sandbox or an MCP server left behind fails the
// suite, named. Failed tests are listed at the end with their files.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { createInterface } from "node:readline";

/**
 * Files that need a process of their own, file → why. None today: no e2e or build file changes
 * process.env, the working directory, or other state of its process, and the tmux tests use a
 * socket per test (pid and a counter). A file that must (or that leaves its process unusable)
 * goes here, with the reason.
 */
const SOLO = new Map([
  // ["test/e2e/example.test.ts", "sets process.env.X for the modules it imports"],
]);
/** Files known to take longest: started first, so the run does not end waiting on one of them. */
const SLOW = ["test/build/package.test.ts", "test/build/launcher.test.ts"];

const root = new URL("..", import.meta.url).pathname;
const find = (dir) => readdirSync(join(root, dir), { recursive: true }).filter((f) => f.endsWith(".test.ts")).map((f) => join(dir, f));
const args = process.argv.slice(2);
const flags = args.filter((a) => a.startsWith("-"));
const named = args.filter((a) => !a.startsWith("-")).map((f) => relative(root, resolve(f)));
const files = named.length ? named : [...find("test/e2e"), ...find("test/build")];
// Then the slowest files of the last whole run (their times are kept in node_modules/.cache/keen, beside tsc's state),
// so the two workers end close together; a file without a time (new, or no run yet) goes by its size, first.
const timesFile = join(root, "node_modules/.cache/keen/e2e-times.json");
const lastTimes = (() => {
  try {
    return JSON.parse(readFileSync(timesFile, "utf8"));
  } catch {
    return {};
  }
})();
const rank = (f) =>
  SLOW.includes(f) ? SLOW.indexOf(f) - SLOW.length - 2e12 : f in lastTimes ? -lastTimes[f] : -1e12 - statSync(join(root, f)).size;
const times = {};
/**
 * CPU seconds of a worker and of the children it has reaped (Keen, servers, shells: /proc's utime, stime,
 * cutime, cstime), so a file's share is the difference around it. What a tmux server runs is not a child.
 * KEEN_E2E_CPU=1 lists the files by it at the end: where to look when the suite grows slow.
 */
function cpuOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "latin1").split(") ")[1].split(" ");
    return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100;
  } catch {
    return undefined;
  }
}
const cpu = {};
const queue = [...files].sort((a, b) => rank(a) - rank(b));
const jobs = Math.max(1, Math.min(files.length, Number(process.env.KEEN_E2E_JOBS) || 2));

const tmp = mkdtempSync(join(tmpdir(), "keen-e2e-run-"));
const marker = randomUUID();
const env = { ...process.env, KEEN_E2E_TMPDIR: tmp, KEEN_E2E_RUN: marker };
delete env.TSX_DISABLE_CACHE;

const counts = { passed: 0, failed: 0, skipped: 0, todo: 0 };
const failures = []; // "file: test name"
const failedFiles = new Set();
let workers = 0;

/** A worker process; `run(file)` resolves when the file is done (or the worker died: then rejects). */
function startWorker() {
  workers++;
  const child = spawn(process.execPath, [
    "--import", "tsx", ...flags,
    `--test-reporter=${join(root, "scripts/test-events.mjs")}`, "--test-reporter-destination=stdout",
    join(root, "scripts/run-shard.mjs"),
  ], { cwd: root, env, stdio: ["ignore", "pipe", "pipe", "ipc"] });
  // The report of each file comes whole over IPC (test-events.mjs); here only what tests print
  // themselves, in whole lines.
  createInterface({ input: child.stdout }).on("line", (line) => process.stdout.write(`${line}\n`));
  createInterface({ input: child.stderr }).on("line", (line) => process.stderr.write(`${line}\n`));
  running.add(child);
  child.on("close", () => running.delete(child));
  let current;
  let waiting;
  const ready = new Promise((resolve) => child.once("message", resolve));
  child.on("message", (m) => {
    if (m.outcome && current) {
      if (m.outcome === "failed" && !m.suite) failures.push(`${current}: ${m.name}`);
      if (m.outcome === "failed" && m.fileDone && !failedFiles.has(current)) {
        failures.push(`${current}: failed outside its tests (its import or a top-level hook; see its report above)`);
      }
      if (m.outcome === "failed") failedFiles.add(current);
      if (!m.suite) counts[m.outcome]++;
    }
    if (m.output) process.stdout.write(m.output);
    if (m.fileDone) waiting?.resolve();
  });
  const exited = new Promise((resolve) => child.on("close", (code, signal) => {
    if (current) {
      failedFiles.add(current);
      failures.push(`${current}: its process exited (${signal ?? `code ${code}`}) before the file's tests ended`);
      waiting?.reject();
    }
    resolve(code ?? 1);
  }));
  return {
    async run(file) {
      await ready;
      current = file;
      const began = Date.now();
      const cpuBefore = cpuOf(child.pid);
      await new Promise((resolve, reject) => {
        waiting = { resolve, reject };
        child.send({ file });
      });
      times[file] = Date.now() - began;
      const cpuAfter = cpuOf(child.pid);
      if (cpuBefore !== undefined && cpuAfter !== undefined) cpu[file] = cpuAfter - cpuBefore;
      current = undefined;
    },
    async end() {
      if (child.connected) child.send({ end: true });
      return exited;
    },
  };
}

// SIGTERM (npm test stops the e2e run when the unit tests or tsc failed) or Ctrl-C: no new file starts, the
// workers are killed, and the run ends through the same clean-up check as always (processes, temp files).
const running = new Set();
let stoppedBy;
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    stoppedBy ??= signal;
    queue.length = 0;
    for (const child of running) child.kill("SIGKILL");
  });
}

async function slot() {
  let shared;
  let code = 0;
  for (let file; (file = queue.shift()); ) {
    try {
      if (SOLO.has(file)) {
        const solo = startWorker();
        await solo.run(file);
        code ||= await solo.end();
      } else {
        shared ??= startWorker();
        await shared.run(file);
      }
    } catch {
      shared = undefined; // it died; the next file gets a new one
      code = 1;
    }
  }
  return (await shared?.end()) || code;
}

const started = Date.now();
const slots = Array.from({ length: jobs }, slot);
// `npm test` runs tsc and the unit tests beside this suite, CPU-bound, and says when they are done
// (SIGUSR2): then KEEN_E2E_JOBS_LATER workers take files. Two e2e workers alone leave a core idle for
// ~a quarter of their time (they wait on processes, terminals and timers); a third fills it.
const later = Math.min(files.length, Number(process.env.KEEN_E2E_JOBS_LATER) || 0);
process.on("SIGUSR2", () => {
  while (slots.length < later && queue.length && !stoppedBy) slots.push(slot());
});
let codes;
for (let count = 0; count !== slots.length; ) {
  count = slots.length;
  codes = await Promise.all(slots);
}

const survivors = [];
for (const pid of (process.platform === "linux" ? readdirSync("/proc") : []).filter((name) => /^\d+$/.test(name))) {
  try {
    if (readFileSync(`/proc/${pid}/environ`, "latin1").includes(`KEEN_E2E_RUN=${marker}`)) {
      survivors.push(`${pid}: ${readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").join(" ").trim()}`);
      process.kill(Number(pid), "SIGKILL");
    }
  } catch {
    // Gone already, or not ours to read.
  }
}
const left = readdirSync(tmp, { recursive: true }).map((f) => relative(tmp, join(tmp, f)));
rmSync(tmp, { recursive: true, force: true });
const seconds = ((Date.now() - started) / 1000).toFixed(1);
console.log(`\ntest:e2e: ${files.length} files in ${workers} processes (${slots.length} at a time), ${seconds} s: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped${counts.todo ? `, ${counts.todo} todo` : ""}`);
if (failedFiles.size) console.error(`test:e2e: failed in ${[...failedFiles].join(", ")}:\n  ${failures.join("\n  ")}`);
if (process.env.KEEN_E2E_CPU === "1") {
  const rows = Object.entries(cpu).sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, s]) => sum + s, 0);
  console.log(`test:e2e: CPU by file (worker and reaped children; ${total.toFixed(1)} s in all):\n${rows.map(([f, s]) => `  ${s.toFixed(1).padStart(6)} s  ${f}`).join("\n")}`);
}
if (stoppedBy) console.error(`test:e2e: stopped by ${stoppedBy}; the files not yet started did not run`);
if (!failedFiles.size && codes.some(Boolean)) console.error("test:e2e: a worker process failed after its files' tests passed (see its last words above: something left running?)");
if (survivors.length) console.error(`test:e2e: processes of the run still alive (killed now):\n  ${survivors.join("\n  ")}`);
if (left.length) console.error(`test:e2e: the run left files in its temp directory:\n  ${left.slice(0, 50).join("\n  ")}`);
const failed = stoppedBy || failedFiles.size || codes.some(Boolean) || survivors.length || left.length;
if (!named.length && !failed) {
  try {
    mkdirSync(dirname(timesFile), { recursive: true });
    writeFileSync(timesFile, JSON.stringify(times));
  } catch {
    // Only the order of the next run depends on it.
  }
}
process.exit(failed ? 1 : 0);
