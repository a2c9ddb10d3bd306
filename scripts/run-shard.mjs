// One unit-test shard (see test-unit.mjs): imports the given test files into this process, where
// node:test runs their tests one after another. A last test arms a watchdog: if something a test
// started (a server, a timer, a child) still holds the process 30 s after the last test, the
// shard fails and names what is left, instead of hanging the suite.
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

// Resolved before the first import: the tests of a file imported first already run while later files
// load, and one may change the working directory for a while (test/cli/in-process.ts does).
const urls = process.argv.slice(2).map((file) => pathToFileURL(resolve(file)).href);
for (const url of urls) await import(url);

test("this shard leaves nothing running", () => {
  setTimeout(() => {
    const left = process.getActiveResourcesInfo().filter((r) => r !== "TTYWrap");
    console.error(`test:unit: the shard's tests ended but left these running: ${left.join(", ")}${children()}`);
    process.exit(1);
  }, 30_000).unref();
});

/** The shard's child processes, named: a pipe left open is most often a child nobody ended. */
function children() {
  try {
    const list = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" }).trim();
    return list ? `; child processes:\n${list}` : "";
  } catch {
    return "";
  }
}
