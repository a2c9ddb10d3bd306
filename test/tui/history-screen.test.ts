import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../temp.js";
import { draft as d } from "../fakes/fake-engine.js";
import { TuiHarness } from "./harness.js";

async function quit(h: TuiHarness): Promise<void> {
  await h.keys("\x03");
  await h.keys("\x03");
  await h.keys("\x04");
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the TUI did not exit:\n${h.text()}`)), 20_000).unref());
  await Promise.race([h.result, timeout]);
}

/** The input box's rows: from its top border to its bottom one. */
function inputBox(h: TuiHarness): string {
  const rows = h.screen();
  const last = (from: number, corner: string) => {
    for (let i = from; i >= 0; i--) if (rows[i]!.startsWith(corner)) return i;
    return -1;
  };
  const end = last(rows.length - 1, "└");
  const top = last(end - 1, "┌");
  return rows.slice(top + 1, end).join("\n");
}

const PASTE = Array.from({ length: 300 }, (_, i) => `log line ${i}`).join("\n") + "\n";

test("history: a 300-line paste is labelled 300 lines and Up recalls it whole, folded; an older stored long prompt folds too", async () => {
  const dir = makeTempDir("keen-tui-history-");
  const historyFile = join(dir, "history.jsonl");
  writeFileSync(historyFile, `${JSON.stringify(Array.from({ length: 40 }, (_, i) => `old ${i}`).join("\n"))}\n${JSON.stringify("short one")}\n`);
  const h = new TuiHarness(80, 24).start({ historyFile });
  await h.waitFor("Type a prompt");
  await h.keys(`see \x1b[200~${PASTE}\x1b[201~`);
  await h.waitFor("> see [pasted 300 lines]");
  await h.keys("\r");
  assert.deepEqual(h.engine.commands("prompt").map((c) => c.text), [`see ${PASTE}`]);
  h.engine.emit(d.result());
  await h.keys("\x1b[A");
  await h.waitFor("> see [pasted 300 lines]");
  assert.equal(inputBox(h).trim(), "│> see [pasted 300 lines]                                                      │".trim());
  // One more Up is the entry before it, not a line inside the paste.
  await h.keys("\x1b[A");
  await h.waitFor("> short one");
  await h.keys("\x1b[A");
  await h.waitFor("> [pasted 40 lines]");
  await h.keys("\x1b[B\x1b[B");
  await h.waitFor("> see [pasted 300 lines]");
  await h.keys("\r");
  assert.equal(h.engine.commands("prompt").at(-1)!.text, `see ${PASTE}`);
  await quit(h);
});

test("history: Ctrl-R searches older prompts as you type; Ctrl-R again goes older; Enter takes the match; Esc and Ctrl-G put back the draft", async () => {
  const dir = makeTempDir("keen-tui-history-");
  const historyFile = join(dir, "history.jsonl");
  writeFileSync(historyFile, ["fix the parser", "run the tests", "fix the lexer", "deploy"].map((p) => JSON.stringify(p)).join("\n") + "\n");
  const h = new TuiHarness(80, 24).start({ historyFile });
  await h.waitFor("Type a prompt");
  await h.keys("half typed");
  await h.keys("\x12");
  await h.waitFor("search:");
  await h.keys("fix");
  await h.waitFor(/search: fix[\s\S]*> fix the lexer/);
  await h.keys("\x12");
  await h.waitFor(/search: fix[\s\S]*> fix the parser/);
  await h.keys("\x12z");
  await h.waitFor(/failing search: fixz[\s\S]*> fix the parser/);
  await h.keys("\x1b");
  await h.waitFor("> half typed");
  assert.ok(!inputBox(h).includes("search"), inputBox(h));
  await h.keys("\x12tests\x07");
  await h.waitFor("> half typed");
  await h.keys("\x12tests");
  await h.waitFor(/> run the tests/);
  await h.keys("\r");
  assert.equal(h.engine.commands("prompt").length, 0, "Enter takes the match into the input; it does not send");
  assert.ok(!inputBox(h).includes("search"), inputBox(h));
  await h.keys(" now\r");
  assert.deepEqual(h.engine.commands("prompt").map((c) => c.text), ["run the tests now"]);
  await quit(h);
});
