import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { createEditFileTool } from "../../app/tools/edit-file.js";
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
