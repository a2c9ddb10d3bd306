// One test process of several files. Two ways:
// - Unit shard (test-unit.mjs): the files are arguments; each is imported into this process inside a
//   suite named after it (as below), where node:test runs their tests one after another. A last test arms a watchdog: if something a test
//   started (a server, a timer, a child) still holds the process 30 s after the last test, the
//   shard fails and names what is left, instead of hanging the suite.
// - E2E worker (test-e2e.mjs, started with an IPC channel): the runner sends one file at a time;
//   each is imported inside a suite named after the file, so the file's top-level before/after
//   hooks bind to that suite (node:test finds the parent of a test or hook from the async context
//   the call is made in, and a module evaluated by `await import()` inside the suite's function
//   runs in the suite's context) and run when that file's tests do, not at the process's end. On
//   "end" the channel closes and the same 30 s watchdog applies.
import { execFileSync } from "node:child_process";
import { describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

// Paths are resolved against the directory the shard started in: the tests of a file imported first
// already run while later files load, and one may change the working directory for a while
// (test/cli/in-process.ts does).
const startDir = process.cwd();
const load = (file) => import(pathToFileURL(resolve(startDir, file)).href);

if (process.send) {
  // Node and tsx are loaded: from here on the tests' temp files (and tsx's cache, were tsx started
  // by a test) go to the run's own directory, which the runner checks is left empty.
  process.env.TMPDIR = process.env.KEEN_E2E_TMPDIR;
  process.env.TSX_DISABLE_CACHE = "1";
  delete process.env.KEEN_E2E_TMPDIR;
  // The no-trace check (test/e2e/harness.ts) lets a run leave a file that a mock reply named: those
  // replies are the current file's alone, not every earlier file's of this worker.
  const mock = await import(new URL("../test/fakes/mock-llm-server.ts", import.meta.url).href);
  process.on("message", async (message) => {
    if (message.file) {
      mock.forgetServedSteps();
      // test-events.mjs tells the runner when this suite has ended.
      describe(message.file, () => load(message.file));
    } else {
      process.disconnect();
      watchdog();
    }
  });
  process.send({ ready: true });
} else {
  // Each file in a suite of its own too, for the same reason: a file's top-level hooks (a beforeEach that
  // resets its mock server) must not run around another file's tests, which they did once the shards'
  // order put such a file first (seen on Node 24).
  for (const file of process.argv.slice(2)) describe(file, () => load(file));
  test("this shard leaves nothing running", watchdog);
}

function watchdog() {
  setTimeout(() => {
    const left = process.getActiveResourcesInfo().filter((r) => r !== "TTYWrap");
    console.error(`test shard: the tests ended but left these running: ${left.join(", ")}${children()}`);
    process.exit(1);
  }, 30_000).unref();
}

/** The shard's child processes, named: a pipe left open is most often a child nobody ended. */
function children() {
  try {
    const list = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" }).trim();
    return list ? `; child processes:\n${list}` : "";
  } catch {
    return "";
  }
}
