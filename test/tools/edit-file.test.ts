import assert from "node:assert/strict";
import { linkSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { createEditFileTool } from "../../app/tools/edit-file.js";
import { unifiedDiff } from "../../app/tools/file-text.js";
import { call, tempWorkspace } from "./helpers.js";

const t = tempWorkspace();
const edit = createEditFileTool(t.ctx());
const file = (rel: string) => readFileSync(join(t.ws, rel), "utf8");

test("replaces one exact occurrence and returns a diff", async () => {
  t.write({ "a.ts": "const a = 1;\nconst b = 2;\n" });
  const r = await edit.run({ path: "a.ts", old_string: "const b = 2;", new_string: "const b = 3;" }, call());
  assert.equal(r.is_error, false);
  assert.equal(r.content, "Edited a.ts: replaced 1 occurrence.");
  assert.equal(file("a.ts"), "const a = 1;\nconst b = 3;\n");
  assert.equal(r.details?.path, join(t.ws, "a.ts"));
  assert.match(String(r.details?.diff), /@@ -1,2 \+1,2 @@\n const a = 1;\n-const b = 2;\n\+const b = 3;\n/);
  assert.deepEqual([r.details?.old_text, r.details?.new_text], ["const a = 1;\nconst b = 2;\n", "const a = 1;\nconst b = 3;\n"]);
});

test("not found: clear failure, file untouched", async () => {
  t.write({ "b.ts": "  indented\n" });
  const r = await edit.run({ path: "b.ts", old_string: "indented\n  more", new_string: "x" }, call());
  assert.equal(r.is_error, true);
  assert.match(r.content, /^old_string was not found in b\.ts\. It must match exactly, including whitespace/);
  assert.equal(file("b.ts"), "  indented\n");
});

test("several matches without replace_all: says how many and suggests context", async () => {
  t.write({ "c.ts": "x();\nx();\nx();\n" });
  const r = await edit.run({ path: "c.ts", old_string: "x();", new_string: "y();" }, call());
  assert.equal(r.is_error, true);
  assert.equal(r.content, "old_string matches 3 places in c.ts; add surrounding lines to make it unique, or set replace_all to true.");
  assert.equal(file("c.ts"), "x();\nx();\nx();\n");
});

test("replace_all replaces every occurrence", async () => {
  t.write({ "d.ts": "x();\nx();\nz();\n" });
  const r = await edit.run({ path: "d.ts", old_string: "x()", new_string: "y()", replace_all: true }, call());
  assert.equal(r.content, "Edited d.ts: replaced 2 occurrences.");
  assert.equal(file("d.ts"), "y();\ny();\nz();\n");
});

test("replacement text is literal ($& and $1 are not patterns)", async () => {
  t.write({ "e.ts": "price\n" });
  await edit.run({ path: "e.ts", old_string: "price", new_string: "$& $1 $$" }, call());
  assert.equal(file("e.ts"), "$& $1 $$\n");
});

test("LF old_string matches a CRLF file, and the file keeps CRLF", async () => {
  t.write({ "f.txt": "one\r\ntwo\r\nthree\r\n" });
  const r = await edit.run({ path: "f.txt", old_string: "one\ntwo", new_string: "uno\ndos" }, call());
  assert.equal(r.is_error, false);
  assert.equal(file("f.txt"), "uno\r\ndos\r\nthree\r\n");
});

test("other failures", async () => {
  t.write({ "g.ts": "same\n", "bin.dat": Buffer.from([1, 0, 2]) });
  const cases: [unknown, RegExp][] = [
    [{ path: "g.ts", old_string: "same", new_string: "same" }, /^old_string and new_string are identical/],
    [{ path: "nope.ts", old_string: "a", new_string: "b" }, /^File not found: nope\.ts\. To create a file use write_file\.$/],
    [{ path: "bin.dat", old_string: "a", new_string: "b" }, /^bin\.dat is a binary file/],
    [{ path: "g.ts", old_string: "", new_string: "b" }, /^Invalid input for edit_file:/],
    [{ path: "../outside.ts", old_string: "a", new_string: "b" }, /^Refused: writing outside the workspace/],
  ];
  for (const [input, pattern] of cases) {
    const r = await edit.run(input, call());
    assert.equal(r.is_error, true, JSON.stringify(input));
    assert.match(r.content, pattern);
  }
  assert.equal(file("g.ts"), "same\n");
});

const bytes = (rel: string) => readFileSync(join(t.ws, rel));

test("a Latin-1 file is edited byte for byte: only the replaced span changes", async () => {
  const latin1 = Buffer.from("caf\xe9 = 1;\r\nname = \"Jos\xe9\"\nend", "latin1");
  t.write({ "l1.txt": latin1 });
  const r = await edit.run({ path: "l1.txt", old_string: "= 1;", new_string: "= 2; // changed" }, call());
  assert.equal(r.is_error, false, r.content);
  assert.deepEqual(bytes("l1.txt"), Buffer.from("caf\xe9 = 2; // changed\r\nname = \"Jos\xe9\"\nend", "latin1"));
  const all = await edit.run({ path: "l1.txt", old_string: "e", new_string: "E", replace_all: true }, call());
  assert.equal(all.is_error, false, all.content);
  assert.deepEqual(bytes("l1.txt"), Buffer.from("caf\xe9 = 2; // changEd\r\nnamE = \"Jos\xe9\"\nEnd", "latin1"));
});

test("a Latin-1 file refuses non-ASCII text in the edit, and stays as it was", async () => {
  const latin1 = Buffer.from("caf\xe9\n", "latin1");
  t.write({ "l2.txt": latin1 });
  for (const input of [
    { path: "l2.txt", old_string: "caf\uFFFD", new_string: "cafe" },
    { path: "l2.txt", old_string: "caf", new_string: "caf\u00e9" },
  ]) {
    const r = await edit.run(input, call());
    assert.equal(r.is_error, true);
    assert.match(r.content, /^l2\.txt is not valid UTF-8 \(a legacy encoding such as Latin-1\); edit_file changes such a file byte for byte and can only match and insert ASCII text, but (old|new)_string has other characters/);
  }
  assert.deepEqual(bytes("l2.txt"), latin1);
});

test("CRLF without a final newline: \\n in old_string and new_string becomes CRLF, and no newline is added", async () => {
  t.write({ "crlf.txt": "one\r\ntwo\r\nthree" });
  const r = await edit.run({ path: "crlf.txt", old_string: "two\nthree", new_string: "2\n3" }, call());
  assert.equal(r.is_error, false, r.content);
  assert.equal(file("crlf.txt"), "one\r\n2\r\n3");
  await edit.run({ path: "crlf.txt", old_string: "one", new_string: "one\nand a half" }, call());
  assert.equal(file("crlf.txt"), "one\r\nand a half\r\n2\r\n3");
  t.write({ "lf.txt": "a\nb" });
  await edit.run({ path: "lf.txt", old_string: "b", new_string: "c" }, call());
  assert.equal(file("lf.txt"), "a\nc");
});

test("a UTF-8 file keeps its BOM and every other byte", async () => {
  t.write({ "bom.txt": Buffer.from("\ufeffhé\r\nwörld\n", "utf8") });
  await edit.run({ path: "bom.txt", old_string: "wörld", new_string: "world" }, call());
  assert.deepEqual(bytes("bom.txt"), Buffer.from("\ufeffhé\r\nworld\n", "utf8"));
});

test("the redaction marker in old_string or new_string is refused; the file keeps its secret", async () => {
  t.write({ "cfg.ts": 'const key = "sk-real-secret-value";\n' });
  for (const input of [
    { path: "cfg.ts", old_string: 'const key = "[redacted]";', new_string: 'const key = process.env.KEY;' },
    { path: "cfg.ts", old_string: "const key", new_string: 'const key = "[redacted]"; const old' },
  ]) {
    const r = await edit.run(input, call());
    assert.equal(r.is_error, true);
    assert.match(r.content, /^Refused: (old|new)_string contains \[redacted\], the marker Keen puts where it hid a secret from you; the file holds a real secret there, and writing the marker would destroy it\. Edit around it/);
  }
  assert.equal(file("cfg.ts"), 'const key = "sk-real-secret-value";\n');
});

test("a file with more than one hard link is not edited", async () => {
  t.write({ "shared.txt": "same\n" });
  linkSync(join(t.ws, "shared.txt"), join(t.ws, "shared-2.txt"));
  const r = await edit.run({ path: "shared-2.txt", old_string: "same", new_string: "other" }, call());
  assert.equal(r.is_error, true);
  assert.match(r.content, /has 2 hard links/);
  assert.equal(file("shared.txt"), "same\n");
});

test("preview returns the diff the edit would make and writes nothing", async () => {
  t.write({ "pv.ts": "let a = 1;\r\n" });
  const p = await edit.preview!({ path: "pv.ts", old_string: "a = 1", new_string: "a = 2" });
  assert.deepEqual(p, {
    path: join(t.ws, "pv.ts"), diff: unifiedDiff("pv.ts", "let a = 1;\r\n", "let a = 2;\r\n"), old_text: "let a = 1;\r\n", new_text: "let a = 2;\r\n",
  });
  assert.equal(file("pv.ts"), "let a = 1;\r\n");
  assert.match(String(await edit.preview!({ path: "pv.ts", old_string: "nope", new_string: "x" })), /^old_string was not found in pv\.ts/);
  assert.match(String(await edit.preview!({ path: "../x.ts", old_string: "a", new_string: "b" })), /^Refused: writing outside the workspace/);
  assert.match(String(await edit.preview!({ path: "pv.ts", old_string: "[redacted]", new_string: "b" })), /^Refused: old_string contains \[redacted\]/);
  assert.match(String(await edit.preview!({ path: "missing.ts", old_string: "a", new_string: "b" })), /^File not found: missing\.ts/);
  assert.match(String(await edit.preview!({ path: 3 })), /^Invalid input for edit_file/);
});

