// A node:test reporter for the e2e worker processes (see test-e2e.mjs): it prints nothing (the
// spec reporter beside it does) and sends each finished test's outcome to the runner over the
// worker's IPC channel. A worker runs one file at a time, inside a suite at the top level: that
// suite's own end is the file's end (sent from here, after the file's last outcome, since
// reporters see events later than the tests run). A failed suite counts as a failure too: a
// file whose import or hook fails may have no test to fail.
export default async function* events(source) {
  for await (const { type, data } of source) {
    if (type !== "test:pass" && type !== "test:fail") continue;
    const outcome = type === "test:fail" ? "failed" : data.skip ? "skipped" : data.todo ? "todo" : "passed";
    process.send?.({ outcome, name: data.name, suite: data.details?.type === "suite", fileDone: data.nesting === 0 });
  }
  yield "";
}
