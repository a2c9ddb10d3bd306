import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { makeTempDir, removeTempDir } from "./temp.js";

const ROOT = resolve(import.meta.dirname, "..");
// Files that make sandboxes, spawn keen (under a pseudo-terminal too), start mock servers, copy the checkout, open stores,
// run bash in the OS sandbox (its sockets and temp dirs; Keens killed with SIGKILL) and MCP servers in their process groups.
const PART = [
  "test/e2e/run-terminal.test.ts", "test/build/launcher.test.ts", "test/storage/level-store.test.ts", "test/tools/workspace.test.ts",
  "test/e2e/sandbox.test.ts", "test/e2e/mcp-failures.test.ts", "test/e2e/run-store-failures.test.ts",
];

/** Processes whose environment holds `marker`: the children a run left alive. */
function survivors(marker: string): string[] {
  const alive: string[] = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, "latin1").includes(marker)) alive.push(pid);
    } catch {
      // Gone already, or not ours to read.
    }
  }
  return alive;
}

/** A pid with its command line, for the failure message. */
function describe(pid: string): string {
  try {
    return `${pid}: ${readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").join(" ").trim()}`;
  } catch {
    return pid;
  }
}

test("a part of the suite leaves no file in the temp directory and no process behind", { skip: process.platform !== "linux" && "reads /proc" }, async () => {
  const tmp = makeTempDir("keen-no-trace-");
  const marker = `KEEN_NO_TRACE=${randomUUID()}`;
  // tsx keeps a compile cache in the temp directory: not the suite's trace, so it is off here.
  // NODE_TEST_CONTEXT would make the inner run report to this one instead of printing.
  const env = { ...process.env, NODE_TEST_CONTEXT: undefined, TMPDIR: tmp, TSX_DISABLE_CACHE: "1", KEEN_NO_TRACE: marker.slice("KEEN_NO_TRACE=".length) };
  const child = spawn(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=1", ...PART], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const code = await new Promise<number | null>((done) => child.on("close", done));
  assert.equal(code, 0, out.slice(Math.max(0, out.indexOf("not ok") - 200), out.indexOf("not ok") + 3000));
  assert.match(out, /^# pass [1-9]/m);
  assert.deepEqual(readdirSync(tmp), [], "the temp directory holds nothing new");
  assert.deepEqual(survivors(marker).map(describe), [], "no process of the run is alive");
  removeTempDir(tmp);
});
