// Runs the end-to-end suite (test/e2e, test/build) as `npm run test:e2e`, with one clean-up check
// over all of it, in seconds: the run gets a temp directory of its own (TMPDIR) and a marker in
// its environment. Afterwards the directory must be empty and no process carrying the marker may
// be alive: whatever a test, Keen, the sandbox or an MCP server left behind fails the suite,
// named. Arguments are passed to `node --test` (e.g. a file list to run only those).
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const files = (dir) => readdirSync(join(root, dir), { recursive: true }).filter((f) => f.endsWith(".test.ts")).map((f) => join(dir, f)).sort();
const args = process.argv.slice(2);
const targets = args.some((a) => !a.startsWith("-")) ? args : [...args, ...files("test/e2e"), ...files("test/build")];

const tmp = mkdtempSync(join(tmpdir(), "keen-e2e-run-"));
const marker = randomUUID();
// tsx keeps a compile cache in the temp directory: not a trace of the suite, so it is off here.
const env = { ...process.env, TMPDIR: tmp, TSX_DISABLE_CACHE: "1", KEEN_E2E_RUN: marker };
const child = spawn(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=2", ...targets], { cwd: root, env, stdio: "inherit" });
const code = await new Promise((done) => child.on("close", (c, signal) => done(c ?? (signal ? 1 : 0))));

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
if (survivors.length) console.error(`test:e2e: processes of the run still alive (killed now):\n  ${survivors.join("\n  ")}`);
if (left.length) console.error(`test:e2e: the run left files in its temp directory:\n  ${left.slice(0, 50).join("\n  ")}`);
process.exit(code || (survivors.length || left.length ? 1 : 0));
