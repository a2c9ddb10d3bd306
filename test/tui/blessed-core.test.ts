import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

// In a fresh process: which of blessed's files the TUI's start loads is the point.
const SCRIPT = `
const { PassThrough } = require("node:stream");
(async () => {
  const { loadBlessed } = await import("./app/tui/blessed-core.ts");
  const { createBlessedSurface } = await import("./app/tui/screen.ts");
  const { loadTheme } = await import("./themes/index.ts");
  const blessed = await loadBlessed();
  const reads = [];
  const read = blessed.Tput.prototype.readTerminfo;
  blessed.Tput.prototype.readTerminfo = function (term) {
    reads.push(term || this.terminal);
    return read.call(this, term);
  };
  const output = Object.assign(new PassThrough(), { isTTY: true, columns: 80, rows: 24 });
  const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode() {} });
  output.resume();
  const surface = createBlessedSurface(blessed, input, output, () => loadTheme(undefined, {}));
  const tab = blessed.unicode.charWidth("\\t");
  surface.destroy();
  const loaded = Object.keys(require.cache).filter((f) => f.includes("/blessed/lib/")).map((f) => f.replace(/.*\\/blessed\\/lib\\//, ""));
  console.log(JSON.stringify({ tab, loaded, reads }));
  process.exit(0);
})();
`;

test("the TUI loads blessed's screen and box, not its index of every widget, also when a tab's width is asked; its terminfo is read once", () => {
  const out = execFileSync(process.execPath, ["--import", "tsx", "-e", SCRIPT], { cwd: ROOT, encoding: "utf8", env: { ...process.env, TERM: "xterm-256color" } });
  const { tab, loaded, reads } = JSON.parse(out.trim().split("\n").at(-1)!) as { tab: number; loaded: string[]; reads: string[] };
  // The screen's own tab (blessed's default of 4 cells), as the index would have found it.
  assert.equal(tab, 4);
  assert.ok(loaded.includes("widgets/screen.js") && loaded.includes("widgets/box.js"), loaded.join(" "));
  for (const file of ["blessed.js", "widget.js", "widgets/terminal.js", "widgets/image.js"]) assert.ok(!loaded.includes(file), `${file} was loaded`);
  // One terminfo read, of the copy blessed ships: the system's (unparseable for blessed on current ncurses) is not tried first.
  assert.equal(reads.length, 1, JSON.stringify(reads));
  assert.match(reads[0]!, /blessed\/(lib\/\.\.\/)?usr\/xterm-256color$/);
});
