import assert from "node:assert/strict";
import { existsSync, linkSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { unifiedDiff } from "../../app/tools/file-text.js";
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

test("an existing non-UTF-8 file is replaced only when asked, with overwrite_non_utf8", async () => {
  const latin1 = Buffer.from("caf\xe9\n", "latin1");
  t.write({ "l1.txt": latin1 });
  const r = await write.run({ path: "l1.txt", content: "cafe\n" }, call());
  assert.equal(r.is_error, true);
  assert.match(r.content, /^l1\.txt exists and is not valid UTF-8 \(a legacy encoding such as Latin-1, or binary\); write_file would replace bytes it cannot show you\. Use edit_file for ASCII changes, or set overwrite_non_utf8 to true/);
  assert.deepEqual(readFileSync(join(t.ws, "l1.txt")), latin1);
  const forced = await write.run({ path: "l1.txt", content: "cafe\n", overwrite_non_utf8: true }, call());
  assert.equal(forced.is_error, false, forced.content);
  assert.equal(readFileSync(join(t.ws, "l1.txt"), "utf8"), "cafe\n");
});

test("an existing CRLF file keeps CRLF when the new content uses \\n", async () => {
  t.write({ "crlf.txt": "a\r\nb\r\n" });
  await write.run({ path: "crlf.txt", content: "a\nc\nd" }, call());
  assert.equal(readFileSync(join(t.ws, "crlf.txt"), "utf8"), "a\r\nc\r\nd");
  t.write({ "lf.txt": "a\nb\n" });
  await write.run({ path: "lf.txt", content: "x\ny" }, call());
  assert.equal(readFileSync(join(t.ws, "lf.txt"), "utf8"), "x\ny");
});

test("content with the redaction marker is refused; the file keeps its secret", async () => {
  t.write({ "key.ts": "export const key = 'sk-live-0123456789';\n" });
  const r = await write.run({ path: "key.ts", content: "export const key = '[redacted]';\n" }, call());
  assert.equal(r.is_error, true);
  assert.match(r.content, /^Refused: content contains \[redacted\], the marker Keen puts where it hid a secret from you/);
  assert.equal(readFileSync(join(t.ws, "key.ts"), "utf8"), "export const key = 'sk-live-0123456789';\n");
});

test("a file with more than one hard link is not written", async () => {
  t.write({ "one.txt": "x\n" });
  linkSync(join(t.ws, "one.txt"), join(t.ws, "two.txt"));
  const r = await write.run({ path: "two.txt", content: "y\n" }, call());
  assert.match(r.content, /^Refused: .*two\.txt has 2 hard links; writing it would change the same file under its other names too/);
  assert.equal(readFileSync(join(t.ws, "one.txt"), "utf8"), "x\n");
});

test("preview: the diff of a new or replaced file, and nothing is created", async () => {
  const fresh = await write.preview!({ path: "pv/new/file.ts", content: "one\n" });
  assert.deepEqual(fresh, { path: join(t.ws, "pv/new/file.ts"), diff: unifiedDiff("pv/new/file.ts", "", "one\n"), old_text: null, new_text: "one\n" });
  assert.equal(existsSync(join(t.ws, "pv")), false);
  t.write({ "pv.txt": "old\n" });
  assert.deepEqual(await write.preview!({ path: "pv.txt", content: "new\n" }), {
    path: join(t.ws, "pv.txt"), diff: unifiedDiff("pv.txt", "old\n", "new\n"), old_text: "old\n", new_text: "new\n",
  });
  assert.equal(readFileSync(join(t.ws, "pv.txt"), "utf8"), "old\n");
  assert.match(String(await write.preview!({ path: ".env", content: "A=1" })), /^Refused: .*\.env is an environment file/);
  assert.match(String(await write.preview!({ path: "x.ts", content: "[redacted]" })), /^Refused: content contains \[redacted\]/);
  assert.match(String(await write.preview!({ path: "dir" , content: "x" })), /^dir is a directory/);
});
