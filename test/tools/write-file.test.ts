import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { createWriteFileTool } from "../../app/tools/write-file.js";
import { call, tempWorkspace } from "./helpers.js";

const t = tempWorkspace();
const write = createWriteFileTool(t.ctx());

test("creates a file and its parent directories; the diff is against ''", async () => {
  const r = await write.run({ path: "src/deep/new.ts", content: "one\ntwo\n" }, call());
  assert.equal(r.is_error, false);
  assert.equal(r.content, "Created src/deep/new.ts (2 lines).");
  assert.equal(readFileSync(join(t.ws, "src/deep/new.ts"), "utf8"), "one\ntwo\n");
  assert.equal(r.details?.path, join(t.ws, "src/deep/new.ts"));
  const diff = String(r.details?.diff);
  assert.match(diff, /^Index: src\/deep\/new\.ts\n/);
  assert.match(diff, /@@ -0,0 \+1,2 @@\n\+one\n\+two\n/);
  assert.deepEqual([r.details?.old_text, r.details?.new_text], [null, "one\ntwo\n"], "a new file has no old text");
});

test("overwrites, reporting line counts and a diff of the change", async () => {
  t.write({ "old.txt": "keep\nold\n" });
  const r = await write.run({ path: "old.txt", content: "keep\nnew\nmore\n" }, call());
  assert.equal(r.content, "Overwrote old.txt (2 lines before, 3 now).");
  assert.equal(readFileSync(join(t.ws, "old.txt"), "utf8"), "keep\nnew\nmore\n");
  assert.match(String(r.details?.diff), /@@ -1,2 \+1,3 @@\n keep\n-old\n\+new\n\+more\n/);
  assert.deepEqual([r.details?.old_text, r.details?.new_text], ["keep\nold\n", "keep\nnew\nmore\n"]);
});

test("past 128 KiB of old plus new text, the details carry only the unified diff", async () => {
  t.write({ "big.txt": "a\n".repeat(40_000) });
  const r = await write.run({ path: "big.txt", content: `${"a\n".repeat(40_000)}b\n` }, call());
  assert.equal(r.is_error, false);
  assert.ok(String(r.details?.diff).length > 0);
  assert.equal("old_text" in (r.details ?? {}), false);
  assert.equal("new_text" in (r.details ?? {}), false);
});

test("relative paths resolve against cwd", async () => {
  t.write({ "pkg/.keep": "" });
  const r = await createWriteFileTool(t.ctx("pkg")).run({ path: "here.txt", content: "x" }, call());
  assert.equal(r.content, "Created here.txt (1 line).");
  assert.equal(readFileSync(join(t.ws, "pkg/here.txt"), "utf8"), "x");
});

test("refused outside the workspace and for secrets; nothing is written", async () => {
  const outside = join(t.ws, "..", "escaped.txt");
  const r = await write.run({ path: outside, content: "x" }, call());
  assert.equal(r.is_error, true);
  assert.match(r.content, /^Refused: writing outside the workspace \(.*\/ws\) is not allowed: .*\/escaped\.txt$/);
  assert.equal(existsSync(outside), false);
  const env = await write.run({ path: ".env", content: "A=1" }, call());
  assert.equal(env.is_error, true);
  assert.equal(existsSync(join(t.ws, ".env")), false);
});

test("a directory path, and invalid input, are errors", async () => {
  t.write({ "dir/f": "" });
  assert.match((await write.run({ path: "dir", content: "x" }, call())).content, /^dir is a directory/);
  assert.match((await write.run({ path: "x.txt" }, call())).content, /^Invalid input for write_file:/);
});
