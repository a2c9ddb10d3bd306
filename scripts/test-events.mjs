// The node:test reporter of the e2e worker processes (see test-e2e.mjs). It writes the spec
// reporter's text of each file, whole, to the runner over the worker's IPC channel when the file
// ends, with each finished test's outcome: two workers' lines never mix, and the runner counts and
// names failures by file over all workers. A worker runs one file at a time inside a suite at the
// top level (nesting 0): that suite's end is the file's end. A failed suite is sent as well: a
// file whose import or hook fails may have no test to fail.
import { spec } from "node:test/reporters";

export default async function* events(source) {
  const printer = new spec();
  let text = "";
  printer.on("data", (chunk) => (text += chunk));
  for await (const event of source) {
    printer.write(event);
    const { type, data } = event;
    if (type !== "test:pass" && type !== "test:fail") continue;
    const outcome = type === "test:fail" ? "failed" : data.skip ? "skipped" : data.todo ? "todo" : "passed";
    const fileDone = data.nesting === 0;
    if (fileDone) await new Promise((resolve) => setImmediate(resolve)); // the printer's last lines
    process.send?.({ outcome, name: data.name, suite: data.details?.type === "suite", fileDone, output: fileDone ? text : undefined });
    if (fileDone) text = "";
  }
  yield "";
}
