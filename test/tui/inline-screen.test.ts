import { test } from "node:test";
import assert from "node:assert/strict";
import type { EventDraft } from "../../protocol/events.js";
import { draft as d } from "../fakes/fake-engine.js";
import { TuiHarness } from "./harness.js";

/*
 * Work shown inline (issue 24 items 6-8): tool times that agree live and after
 * resume, compact diffs, bash output under its line, and `!command`.
 */

/** Runs `body` on a started TUI and always closes it, so a failed assertion does not leave the test hanging. */
async function withTui(cols: number, rows: number, body: (h: TuiHarness) => Promise<void>): Promise<void> {
  const h = new TuiHarness(cols, rows).start();
  try {
    await h.waitFor("Type a prompt");
    await body(h);
  } finally {
    await quit(h);
  }
}

async function quit(h: TuiHarness): Promise<void> {
  await h.keys("\x03");
  await h.keys("\x04");
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the TUI did not exit:\n${h.text()}`)), 5000).unref());
  await Promise.race([h.result, timeout]);
}

const replayed = (e: EventDraft) => ({ ...e, replay: true }) as EventDraft;

test("a tool's time is the same live and after resume: the permission wait is not counted", { timeout: 60_000 }, async () => {
  const bash = { command: "npm test" };
  await withTui(100, 30, async (live) => {
    live.engine.emit(d.user("test it"));
    live.engine.emit(d.toolUse("t1", "bash", bash));
    live.engine.emit(d.permission("r1", "t1", "bash", bash));
    await live.waitFor("Permission: bash");
    live.engine.advance(4200); // the user reads the request
    await live.keys("y");
    live.engine.emit(d.toolStart("t1", "bash"));
    live.engine.advance(1800);
    live.engine.emit({ ...d.toolResult("t1", "bash", "ok"), duration_ms: 1800 } as EventDraft);
    live.engine.emit(d.result());
    await live.waitFor(/✓ bash npm test +ok/);
    assert.match(live.text(), /✓ bash npm test +ok 1\.8s/);
  });
  // The same session resumed: stored events only (no tool-start), stamped as they were.
  await withTui(100, 30, async (resumed) => {
    resumed.engine.emit(replayed(d.user("test it")));
    resumed.engine.emit(replayed(d.toolUse("t1", "bash", bash)));
    resumed.engine.advance(6000);
    resumed.engine.emit(replayed({ ...d.toolResult("t1", "bash", "ok"), duration_ms: 1800 } as EventDraft));
    await resumed.waitFor(/✓ bash npm test +ok/);
    assert.match(resumed.text(), /✓ bash npm test +ok 1\.8s/);
  });
});
