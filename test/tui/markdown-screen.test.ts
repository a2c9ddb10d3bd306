import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { draft as d } from "../fakes/fake-engine.js";
import { TuiHarness } from "./harness.js";

const FIXTURE = readFileSync(new URL("./fixtures/markdown.md", import.meta.url), "utf8");

/** Cells a screen row takes (CJK counts two). */
const cells = (row: string) => [...row].reduce((w, ch) => w + (/\p{Script=Han}|\p{Script=Hiragana}|\p{Script=Katakana}/u.test(ch) ? 2 : 1), 0);

/** The transcript pane's rows on screen, its border cut off. */
async function rendered(cols: number): Promise<{ h: TuiHarness; rows: string[] }> {
  const h = new TuiHarness(cols, 100).start();
  await h.waitFor("Type a prompt");
  h.engine.emit(d.user("notes"));
  h.engine.emit(d.text(FIXTURE));
  h.engine.emit(d.result());
  await h.waitFor(/^│?Release notes/m, 10000); // rendered: the plain fallback shows the "#"
  await h.waitFor("a quote inside it");
  const screen = h.screen();
  const top = screen.findIndex((r) => r.startsWith("┌─ Keen"));
  const width = screen[top]!.indexOf("┐") - 1;
  const rows: string[] = [];
  for (const row of screen.slice(top + 1)) {
    if (row.startsWith("└")) break;
    // cut by cells, not characters: a wide character fills two
    let out = "";
    for (const ch of [...row].slice(1)) {
      if (cells(out + ch) > width) break;
      out += ch;
    }
    rows.push(out.trimEnd());
  }
  return { h, rows };
}

async function quit(h: TuiHarness): Promise<void> {
  await h.keys("\x03");
  await h.keys("\x04");
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the TUI did not exit:\n${h.text()}`)), 20_000).unref());
  await Promise.race([h.result, timeout]);
}

for (const cols of [80, 120]) {
  test(`${cols} columns: the markdown fixture renders lists, tables, code, quotes and links as written`, async () => {
    const { h, rows } = await rendered(cols);
    const from = rows.findIndex((r) => r.includes("Release notes"));
    const lines = rows.slice(from).join("\n");
    // Each list keeps its own numbering; nested bullets stay bullets, under their parent's text.
    assert.match(lines, /\n {2}1\. Install the tool\n {2}2\. Configure it\n {5}\* set the key\n {5}\* pick a model\n {7}1\. small one\n {7}2\. large one\n {2}3\. Run it\n/);
    assert.match(lines, /\n {2}\* top bullet\n {4}\* nested bullet\n {6}\* deeper bullet\n {2}\* second bullet\n/);
    // The table's columns line up, wide characters counted as two cells.
    const table = rows.filter((r) => /^[┌├└]|^│.*│$/.test(r));
    assert.ok(table.length >= 6, lines);
    const widths = new Set(table.map(cells));
    assert.equal(widths.size, 1, table.join("\n"));
    assert.match(lines, /│ alpha │ 日本語 │ +1 │/);
    assert.match(lines, /\n {2}const answer = 42;\n/);
    assert.match(lines, /\n {2}plain block\n/);
    // A quote has a bar, a quote inside it two.
    assert.match(lines, /\n│ a quote\n│\n│ │ a quote inside it\n/);
    assert.match(lines, /See the docs \(https:\/\/example\.com\/docs\) for more\./);
    await quit(h);
  });
}
