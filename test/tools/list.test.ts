import assert from "node:assert/strict";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { LIST_MAX_ENTRIES, createListTool } from "../../app/tools/list.js";
import { call, tempWorkspace } from "./helpers.js";

const t = tempWorkspace();
t.write({
  ".gitignore": "build/\n*.log\n",
  "b.ts": "",
  "a.ts": "",
  ".eslintrc": "",
  "debug.log": "",
  "src/x.ts": "",
  "build/out.js": "",
  "zdir/.keep": "",
});
symlinkSync(join(t.ws, "src"), join(t.ws, "linked"));
const list = createListTool(t.ctx());

test("directories first with a trailing /, then files; gitignored entries and .git left out", async () => {
  const r = await list.run({}, call());
  assert.equal(r.is_error, false);
  assert.equal(r.content, "linked/\nsrc/\nzdir/\n.eslintrc\n.gitignore\na.ts\nb.ts");
  assert.deepEqual(r.details, { path: t.ws, count: 7, truncated: false });
});

test("a path relative to cwd; an empty directory says so", async () => {
  assert.equal((await list.run({ path: "src" }, call())).content, "x.ts");
  assert.equal((await createListTool(t.ctx("zdir")).run({}, call())).content, ".keep");
  t.write({ "empty/.gitignore": "*\n" });
  assert.match((await list.run({ path: "empty" }, call())).content, /^empty is empty/);
});

test("failures", async () => {
  assert.match((await list.run({ path: "a.ts" }, call())).content, /^a\.ts is a file, not a directory; use read_file/);
  assert.match((await list.run({ path: "missing" }, call())).content, /^Directory not found: missing$/);
  const refused = await list.run({ path: join(t.home, ".ssh") }, call());
  assert.equal(refused.is_error, true);
  assert.match(refused.content, /^Refused: .* is a credential file/);
});

test(`at most ${LIST_MAX_ENTRIES} entries, with a note`, async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < LIST_MAX_ENTRIES + 5; i++) files[`many/f${i}`] = "";
  t.write(files);
  const r = await list.run({ path: "many" }, call());
  assert.equal(r.content.split("\n").length, LIST_MAX_ENTRIES + 2);
  assert.match(r.content, /\[Showing 1000 of 1005 entries\. Use glob to narrow down\.\]$/);
});
