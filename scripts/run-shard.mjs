// One unit-test shard (see test-unit.mjs): imports the given test files into this process, where
// node:test runs their tests one after another. A last test arms a watchdog: if something a test
// started (a server, a timer, a child) still holds the process 30 s after the last test, the
// shard fails and names what is left, instead of hanging the suite.
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

for (const file of process.argv.slice(2)) await import(pathToFileURL(resolve(file)).href);

test("this shard leaves nothing running", () => {
  setTimeout(() => {
    const left = process.getActiveResourcesInfo().filter((r) => r !== "TTYWrap");
    console.error(`test:unit: the shard's tests ended but left these running: ${left.join(", ")}`);
    process.exit(1);
  }, 30_000).unref();
});
