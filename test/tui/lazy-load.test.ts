import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
const HEAVY = ["blessed", "marked", "marked-terminal", "chalk"];

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [join(dir, e.name)] : [],
  );
}

test("blessed, marked, marked-terminal and chalk are only ever loaded with await import()", () => {
  const found: string[] = [];
  for (const file of [...files("app"), ...files("protocol"), ...files("themes")]) {
    const text = readFileSync(join(ROOT, file), "utf8");
    for (const m of text.matchAll(/^import\s+(?!type\b)[^;]*?from\s+["']([^"']+)["']/gm)) {
      if (HEAVY.includes(m[1]!)) found.push(`${file}: ${m[1]}`);
    }
  }
  assert.deepEqual(found, []);
  assert.ok(!/tui/.test(readFileSync(join(ROOT, "app/cli/warm.ts"), "utf8")), "the start-up snapshot never loads the TUI");
});

test("the build keeps the TUI in its own side bundle and blessed out of every bundle", { skip: existsSync(join(ROOT, "dist/tui.cjs")) ? false : "dist/ is not built" }, () => {
  const keen = readFileSync(join(ROOT, "dist/keen.cjs"), "utf8");
  const tui = readFileSync(join(ROOT, "dist/tui.cjs"), "utf8");
  assert.ok(keen.includes('require("./tui.cjs")'), "keen.cjs requires the TUI bundle on first use");
  assert.ok(!keen.includes("marked-terminal") && !keen.includes("blessed/lib"), "no TUI library inside keen.cjs");
  // A require (in a promise) rather than import(): Node 20 loses import()'s callback in a script compiled from a code cache.
  assert.ok(tui.includes('require("blessed/lib/widgets/screen.js")') && !tui.includes('import("blessed'), "blessed is loaded from node_modules at run time");
  // Its files one by one (app/tui/blessed-core.ts), never its index, which requires all 34 widgets.
  assert.ok(!tui.includes('require("blessed")'), "blessed's index is not required");
  assert.ok(!tui.includes("Program.prototype.listen"), "blessed's code is not bundled");
});
