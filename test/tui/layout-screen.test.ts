import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { draft as d } from "../fakes/fake-engine.js";
import { makeTempDir } from "../temp.js";
import { TuiHarness } from "./harness.js";

async function quit(h: TuiHarness): Promise<void> {
  await h.keys("\x03");
  await h.keys("\x04");
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the TUI did not exit:\n${h.text()}`)), 5000).unref());
  await Promise.race([h.result, timeout]);
}

/** The transcript's top border: from column 0 to its top-right corner. */
const transcriptWidth = (h: TuiHarness) => h.screen()[0]!.indexOf("┐") + 1;

test("Alt-T, Alt-D and Alt-Z hide the side panes (the transcript takes the width) and the choice is remembered", async () => {
  const file = join(makeTempDir("keen-tui-prefs-"), "tui-state.json");
  const h = new TuiHarness(120, 40).start({ uiPrefsFile: file });
  await h.waitFor("Type a prompt");
  h.engine.emit(d.user("hi"));
  h.engine.emit(d.text("a line of the answer"));
  h.engine.emit(d.result());
  await h.waitFor("a line of the answer");
  assert.match(h.text(), /Tools/);
  assert.match(h.text(), /Diff/);
  const split = transcriptWidth(h);
  assert.ok(split < 120, h.text());

  await h.keys("\x1bt"); // Alt-T: the tool panel goes, the diff pane takes the whole side column
  await h.waitFor("panes: transcript, diff");
  assert.doesNotMatch(h.text(), /Tools/);
  assert.equal(h.screen()[0]!.slice(split).startsWith("┌─ Diff"), true, h.text());
  assert.deepEqual(JSON.parse(readFileSync(file, "utf8")), { panes: { tools: false, diff: true, plan: true } });

  await h.keys("\x1bd"); // Alt-D: no side pane left, the transcript spans the terminal
  await h.waitFor("zoomed");
  assert.doesNotMatch(h.text(), /Diff|Tools/);
  assert.equal(transcriptWidth(h), 120, h.text());
  assert.match(h.text(), /│a line of the answer/);
  await quit(h);

  // A new run starts zoomed; Alt-Z brings both panes back and that is stored too.
  const again = new TuiHarness(120, 40).start({ uiPrefsFile: file });
  await again.waitFor("Type a prompt");
  assert.doesNotMatch(again.text(), /Diff|Tools/);
  assert.equal(transcriptWidth(again), 120, again.text());
  await again.keys("\x1bz");
  await again.waitFor("Tools");
  assert.match(again.text(), /Diff/);
  assert.equal(transcriptWidth(again), split);
  assert.deepEqual(JSON.parse(readFileSync(file, "utf8")).panes, { tools: true, diff: true, plan: true });
  // Alt-Z again zooms.
  await again.keys("\x1bz");
  await again.waitFor("zoomed");
  assert.equal(transcriptWidth(again), 120);
  await quit(again);
});

test("/layout and a medium terminal: the remaining pane takes the strip's whole width; a broken prefs file is the default", async () => {
  const file = join(makeTempDir("keen-tui-prefs-"), "tui-state.json");
  writeFileSync(file, "{ not json");
  const h = new TuiHarness(80, 30).start({ uiPrefsFile: file });
  await h.waitFor("Type a prompt");
  assert.match(h.text(), /Tools/);
  await h.keys("/layout diff\r");
  await h.waitFor("panes: transcript, tools");
  const strip = h.screen().find((row) => row.startsWith("┌─ Tools"));
  assert.ok(strip && strip.endsWith("┐") && strip.length === 80, h.text());
  assert.doesNotMatch(h.text(), /Diff/);
  assert.deepEqual(JSON.parse(readFileSync(file, "utf8")), { panes: { tools: true, diff: false, plan: true } });
  await h.keys("/layout all\r");
  await h.waitFor("Diff");
  await quit(h);
});
