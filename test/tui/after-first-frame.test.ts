import { test } from "node:test";
import assert from "node:assert/strict";
import { TuiHarness } from "./harness.js";

// keen's TUI opens the provider's connection here (app/cli/tui.ts): its modules must not hold up the first frame.
test("afterFirstFrame runs once, when the first frame is already written", async () => {
  const h = new TuiHarness(100, 30);
  const seen: string[] = [];
  h.start({ afterFirstFrame: () => seen.push(h.written.join("")) });
  try {
    await h.waitFor(/Type a prompt/);
    await h.settle();
    assert.equal(seen.length, 1);
    assert.match(seen[0]!.replace(/\x1b\[\d*C/g, " "), /Type a prompt/);
  } finally {
    await h.stop();
  }
});
