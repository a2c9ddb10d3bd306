import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { runKeen } from "./harness.js";

const README = readFileSync(resolve(import.meta.dirname, "../../README.md"), "utf8");

test("the README's keen run synopsis lists every flag keen run --help knows", async () => {
  const help = await runKeen(["run", "--help"]);
  assert.equal(help.code, 0, help.stderr);
  const flags = [...new Set(help.stdout.match(/--[a-z][a-z-]+/g))].filter((f) => f !== "--help");
  const synopsis = README.slice(README.indexOf("`keen run ["), README.indexOf("<message...>`"));
  assert.ok(flags.length > 10);
  assert.deepEqual(flags.filter((f) => !synopsis.includes(f)), []);
});

test("keen sessions --help describes every subcommand", async () => {
  const help = await runKeen(["sessions", "--help"]);
  assert.equal(help.code, 0, help.stderr);
  for (const sub of ["list", "show", "fork", "rm", "prune"]) assert.match(help.stdout, new RegExp(`^  ${sub}\\b.* {2,}\\S`, "m"), sub);
});

test("an unknown subcommand of sessions or mcp is named as one (exit 2, one line), not passed to their default list", async () => {
  for (const [group, names] of [["sessions", "list, show, compact, fork, export, rm, prune"], ["mcp", "list, get, add, remove, trust, untrust"]]) {
    const r = await runKeen([group!, "nope"]);
    assert.deepEqual([r.code, r.stdout], [2, ""]);
    assert.equal(r.stderr, `keen: unknown command 'nope' for 'keen ${group}' (commands: ${names}) (see --help)\n`);
  }
});
