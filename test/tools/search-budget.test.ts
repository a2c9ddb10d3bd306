import assert from "node:assert/strict";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { createGlobTool } from "../../app/tools/glob.js";
import { createGrepTool, findRipgrep } from "../../app/tools/grep.js";
import type { ToolResult } from "../../app/tools/tool.js";
import { call, tempWorkspace } from "./helpers.js";

/*
 * Patterns the model chooses become backtracking regexes: grep's own, and the
 * ones tinyglobby makes from a glob. Against a crafted line or file name they
 * run for hours. Each call must end on its budget or on abort, and the event
 * loop must keep turning meanwhile (that is what lets SIGINT through).
 */

const BACKTRACKS = "(a+)+$";
const t = tempWorkspace();
t.write({ "src/long.txt": `${"a".repeat(5000)}!\n`, "src/ok.txt": "fine\n" });
// A file name that makes a glob of many stars backtrack: each * can take any share of the a's.
t.write({ [`names/${"a".repeat(200)}`]: "" });
const BAD_GLOB = `${"*a".repeat(16)}*b`;

/**
 * Runs `work` and tells whether the event loop turned meanwhile: a timer set as the work starts
 * must fire before the work ends (a regex run on the main thread would block it until the end).
 * An order of events, not a count or a duration: a loaded machine cannot make it fail.
 */
async function timed(work: () => Promise<ToolResult>) {
  let turned = false;
  const timer = setTimeout(() => (turned = true), 0);
  try {
    const result = await work();
    return { result, turned };
  } finally {
    clearTimeout(timer);
  }
}

test("a backtracking regex in the JS engine ends on the call's budget; the event loop keeps turning", async () => {
  const grep = createGrepTool(t.ctx(), { ripgrep: false, budgetMs: 700 });
  const { result, turned } = await timed(() => grep.run({ pattern: BACKTRACKS, path: "src" }, call()));
  assert.equal(result.is_error, true);
  // Only the budget's timer writes this: the regex itself never ends.
  assert.match(result.content, /^grep stopped after 0\.7s, its time budget: the pattern may backtrack catastrophically/);
  assert.ok(turned, "the event loop turned while the regex ran");
  // The next call gets a fresh worker and works.
  const next = await createGrepTool(t.ctx(), { ripgrep: false }).run({ pattern: "fine" }, call());
  assert.equal(next.content, "src/ok.txt:1:fine");
});

test("aborting a JS grep stuck in a regex ends it at once", async () => {
  const grep = createGrepTool(t.ctx(), { ripgrep: false });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  const { result } = await timed(() => grep.run({ pattern: BACKTRACKS }, call({ signal: controller.signal })));
  // Not the budget's message: the abort ended it.
  assert.deepEqual([result.content, result.is_error], ["The search was interrupted.", true]);
});

test("a glob whose regex backtracks on a long name ends on its budget; the event loop keeps turning", async () => {
  const glob = createGlobTool(t.ctx(), { budgetMs: 700 });
  const { result, turned } = await timed(() => glob.run({ pattern: `names/${BAD_GLOB}` }, call()));
  assert.equal(result.is_error, true);
  assert.match(result.content, /^glob stopped after 0\.7s, its time budget/);
  assert.ok(turned, "the event loop turned while the glob ran");
  // The same kind of glob as grep's filter goes through the same worker.
  const grep = createGrepTool(t.ctx(), { ripgrep: false, budgetMs: 700 });
  const filtered = await grep.run({ pattern: "x", glob: BAD_GLOB }, call());
  assert.match(filtered.content, /^grep stopped after 0\.7s/);
});

test("ripgrep is killed the same way: on the budget and on abort", async () => {
  // A stand-in rg that never finishes, and tells us its pid.
  const pidFile = join(t.ws, "..", "rg.pid");
  const fake = join(t.ws, "..", "rg");
  writeFileSync(fake, `#!/bin/sh\necho $$ > ${pidFile}\nexec sleep 600\n`);
  chmodSync(fake, 0o755);
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const onBudget = await timed(() => createGrepTool(t.ctx(), { ripgrep: fake, budgetMs: 500 }).run({ pattern: "x" }, call()));
  assert.match(onBudget.result.content, /^grep stopped after 0\.5s, its time budget/);
  assert.equal(alive(Number(readFileSync(pidFile, "utf8"))), false, "the rg process is gone");

  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  const onAbort = await timed(() => createGrepTool(t.ctx(), { ripgrep: fake }).run({ pattern: "x" }, call({ signal: controller.signal })));
  assert.equal(onAbort.result.content, "The search was interrupted.");
  assert.equal(alive(Number(readFileSync(pidFile, "utf8"))), false, "the rg process is gone");
});

const rg = findRipgrep();
test("real ripgrep runs the same pattern without backtracking", { skip: rg ? false : "rg is not on PATH" }, async () => {
  // A generous budget: had rg backtracked, the answer would be the budget's message.
  const { result } = await timed(() => createGrepTool(t.ctx(), { ripgrep: rg!, budgetMs: 60_000 }).run({ pattern: BACKTRACKS, path: "src" }, call()));
  assert.deepEqual([result.content, result.is_error], ["No matches found.", false]);
});
