import { test } from "node:test";
import assert from "node:assert/strict";
import { TuiHarness } from "./harness.js";

async function quit(h: TuiHarness): Promise<void> {
  await h.keys("\x03");
  await h.keys("\x04");
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the TUI did not exit:\n${h.text()}`)), 20_000).unref());
  await Promise.race([h.result, timeout]);
}

/** The input row as xterm holds it: each cell's text (a wide character's second cell is ""), and as text. */
function inputRow(h: TuiHarness): { cells: string[]; text: string } {
  const buf = h.term.buffer.active;
  for (let y = h.term.rows - 1; y >= 0; y--) {
    const line = buf.getLine(buf.viewportY + y)!;
    if (line.translateToString(true).startsWith("│>")) {
      const cells: string[] = [];
      for (let x = 0; x < h.term.cols; x++) cells.push(line.getCell(x)!.getChars());
      return { cells, text: line.translateToString(true) };
    }
  }
  throw new Error(`no input row:\n${h.text()}`);
}

test("wide characters: CJK and emoji keep the input box's right border in place; Left/Backspace/Delete take whole grapheme clusters", async () => {
  const h = new TuiHarness(60, 20).start();
  await h.waitFor("Type a prompt");
  await h.keys("日本 🇯🇵 👍🏽 e\u0301 x");
  await h.waitFor("日本");
  let { cells, text } = inputRow(h);
  assert.equal(cells[59], "│", cells.join("|"));
  // Left twice: over "x" and the space; Backspace takes e + the combining accent together.
  await h.keys("\x1b[D\x1b[D\x7f");
  assert.equal(h.text().includes("e\u0301"), false);
  await h.keys("\x7f\x7f"); // the space, then the whole skin-toned thumb
  ({ cells, text } = inputRow(h));
  assert.match(text, /> 日本 🇯🇵 {2}x/, cells.join("|"));
  assert.equal(cells[59], "│", cells.join("|"));
  // Left over the space and the flag, Delete removes the flag whole.
  await h.keys("\x1b[D\x1b[D\x1b[3~");
  ({ cells, text } = inputRow(h));
  assert.match(text, /> 日本 {3}x/, cells.join("|"));
  assert.ok(!cells.some((c) => /[\u{1F1E6}-\u{1F1FF}]/u.test(c)), cells.join("|"));
  assert.equal(cells[59], "│", cells.join("|"));
  // Clearing the prompt leaves no stale cell behind.
  await h.keys("\x03");
  await h.waitFor("Type a prompt");
  ({ cells, text } = inputRow(h));
  assert.ok(!text.includes("日"), text);
  assert.equal(cells[59], "│", cells.join("|"));
  await quit(h);
});
