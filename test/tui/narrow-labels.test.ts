import { test } from "node:test";
import assert from "node:assert/strict";
import { draft as d } from "../fakes/fake-engine.js";
import { TuiHarness } from "./harness.js";
import { viewOfCall } from "./helpers.js";

/**
 * A pane's title sits on its top border. blessed wraps a title wider than the box onto the first
 * row of the box's content, so on a narrow terminal the tail of the title was drawn over the text
 * it labels (found under tmux: "Wwrite_file" over "Write new.txt?", ">last" in the input box).
 */

async function started(cols: number, rows: number): Promise<TuiHarness> {
  const h = new TuiHarness(cols, rows).start({});
  await h.waitFor("Type");
  return h;
}

async function quit(h: TuiHarness): Promise<void> {
  await h.keys("\x03");
  await h.keys("\x04");
  await h.result;
}

test("30 columns: the queue's title stays on the input box's border, and the box shows the prompt", async () => {
  const h = await started(30, 20);
  h.engine.emit(d.sessionStart());
  await h.keys("first\r");
  h.engine.emit(d.user("first"));
  h.engine.emit(d.delta("Alpha."));
  await h.waitFor("Alpha.");
  await h.keys("second\r");
  await h.keys("third\r");
  await h.waitFor("2. queued: third");
  const rows = h.screen();
  const top = rows.findIndex((r) => r.includes("2 queued"));
  assert.ok(top >= 0, rows.join("\n"));
  assert.match(rows[top]!, /^┌.*┐$/, `the title is cut to fit its border:\n${rows.join("\n")}`);
  assert.match(rows[top + 1]!, /^│> /, `the input row is the prompt, not the title's tail:\n${rows.join("\n")}`);
  h.engine.emit(d.result());
  await quit(h);
});

test("24x8: a permission modal's title stays on its border", async () => {
  const h = await started(24, 8);
  h.engine.emit(d.user("go"));
  const view = viewOfCall("write_file", { path: "new.txt" });
  const diff = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,3 @@\n+line1\n+line2\n+line3\n";
  h.engine.emit(d.toolUse("t1", "write_file", { path: "new.txt" }, view));
  h.engine.emit(d.permission("r1", "t1", "write_file", { path: "new.txt" }, diff, "new.txt", view));
  await h.waitFor("Permission");
  const rows = h.screen();
  const top = rows.findIndex((r) => r.includes("Permission"));
  assert.match(rows[top]!, /┌.*┐/, rows.join("\n"));
  assert.doesNotMatch(rows.slice(top + 1).join("\n"), /write_file/, `the title's tail is not drawn inside the modal:\n${rows.join("\n")}`);
  await h.keys("y");
  await quit(h);
});

test("30x8 with five prompts queued: the queue's one row shows the next prompt, cut, and counts the rest; 30x20 lists it above the count", async () => {
  for (const [rows, next, more] of [[8, /^ {2}1\. queued: fix t[^…]*… \+4 more *$/, undefined], [20, /^ {2}1\. queued: fix the flaky te/, /^ {2}… and 4 more *$/]] as const) {
    const h = await started(30, rows);
    h.engine.emit(d.sessionStart());
    await h.keys("first\r");
    h.engine.emit(d.user("first"));
    h.engine.emit(d.delta("Alpha."));
    await h.waitFor("Alpha.");
    for (const prompt of ["fix the flaky test in screen.test.ts", "two", "three", "four", "five"]) await h.keys(`${prompt}\r`);
    await h.waitFor("5 queued");
    const screen = h.screen();
    const at = screen.findIndex((r) => next.test(r));
    assert.ok(at >= 0, `${rows} rows: the first queued prompt shows:\n${screen.join("\n")}`);
    if (more) assert.match(screen[at + 1]!, more, screen.join("\n"));
    assert.doesNotMatch(screen.join("\n"), /… and 5 more/, screen.join("\n"));
    h.engine.emit(d.result());
    await quit(h);
  }
});
