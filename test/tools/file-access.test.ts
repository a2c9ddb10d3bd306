import assert from "node:assert/strict";
import { linkSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { createEditFileTool } from "../../app/tools/edit-file.js";
import { createReadFileTool } from "../../app/tools/read-file.js";
import type { FileAccess } from "../../app/tools/tool.js";
import { createWriteFileTool } from "../../app/tools/write-file.js";
import { call, tempWorkspace } from "./helpers.js";

const t = tempWorkspace();

/** An editor: buffers by path (else the disk), every request recorded; `sides` limits what it offers. */
function editor(buffers: Record<string, string> = {}, sides: ("read" | "write")[] = ["read", "write"]) {
  const asked: string[] = [];
  const open = new Map(Object.entries(buffers).map(([rel, text]) => [join(t.ws, rel), text]));
  const files: FileAccess = {
    ...(sides.includes("read") ? {
      readText: async (path: string) => {
        asked.push(`read ${path}`);
        if (path.endsWith("gone.txt")) throw new Error("no such buffer");
        return open.get(path) ?? readFileSync(path, "utf8");
      },
    } : {}),
    ...(sides.includes("write") ? {
      writeText: async (path: string, text: string) => {
        asked.push(`write ${path}`);
        open.set(path, text);
      },
    } : {}),
  };
  return { files, asked, text: (rel: string) => open.get(join(t.ws, rel)) };
}
const disk = (rel: string) => readFileSync(join(t.ws, rel), "latin1");

test("edit_file on a CRLF buffer keeps CRLF and only the buffer changes; its preview is the buffer's diff", async () => {
  t.write({ "crlf.txt": "old\r\n" });
  const e = editor({ "crlf.txt": "one\r\ntwo\r\n" });
  const edit = createEditFileTool({ ...t.ctx(), files: e.files });
  const preview = await edit.preview!({ path: "crlf.txt", old_string: "two\n", new_string: "three\n" });
  assert.match(typeof preview === "object" ? preview.diff : preview, /-two\r\n\+three\r\n/);
  const r = await edit.run({ path: "crlf.txt", old_string: "two\n", new_string: "three\n" }, call());
  assert.equal(r.is_error, false, r.content);
  assert.equal(e.text("crlf.txt"), "one\r\nthree\r\n");
  assert.equal(disk("crlf.txt"), "old\r\n");
  assert.deepEqual([r.details?.old_text, r.details?.new_text], ["one\r\ntwo\r\n", "one\r\nthree\r\n"]);
});

test("write_file replacing a CRLF buffer keeps CRLF; a new file is written by the editor only", async () => {
  t.write({ "w.txt": "a\r\nb\r\n" });
  const e = editor();
  const write = createWriteFileTool({ ...t.ctx(), files: e.files });
  const r = await write.run({ path: "w.txt", content: "x\ny\n" }, call());
  assert.equal(r.content, "Overwrote w.txt (2 lines before, 2 now).");
  assert.equal(e.text("w.txt"), "x\r\ny\r\n");
  assert.equal(disk("w.txt"), "a\r\nb\r\n");
  const created = await write.run({ path: "sub/new.txt", content: "hi\n" }, call());
  assert.equal(created.content, "Created sub/new.txt (1 line).");
  assert.deepEqual(e.asked, [`read ${join(t.ws, "w.txt")}`, `write ${join(t.ws, "w.txt")}`, `write ${join(t.ws, "sub/new.txt")}`]);
  assert.equal(created.details?.old_text, null);
});

test("the guard decides before the editor is asked: secrets, paths outside the workspace, hard links", async () => {
  t.write({ "linked.txt": "x\n" });
  linkSync(join(t.ws, "linked.txt"), join(t.ws, "other-name.txt"));
  const e = editor();
  const ctx = { ...t.ctx(), files: e.files };
  const read = createReadFileTool(ctx);
  const write = createWriteFileTool(ctx);
  const edit = createEditFileTool(ctx);
  const refusals = [
    await read.run({ path: join(t.home, ".ssh/id_rsa") }, call()),
    await read.run({ path: ".env" }, call()),
    await write.run({ path: join(t.home, "outside.txt"), content: "x" }, call()),
    await write.run({ path: "linked.txt", content: "y\n" }, call()),
    await edit.run({ path: "linked.txt", old_string: "x", new_string: "y" }, call()),
  ];
  assert.deepEqual(refusals.map((r) => [r.is_error, r.content.startsWith("Refused")]), Array(5).fill([true, true]));
  assert.deepEqual(e.asked, []);
});

test("through an editor that only writes, a non-UTF-8 file read from the disk is not edited; editor failures are errors for the model", async () => {
  t.write({ "latin.txt": Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]), "gone.txt": "on disk\n", "bin.txt": "x\n" });
  const writer = editor({}, ["write"]);
  const r = await createEditFileTool({ ...t.ctx(), files: writer.files }).run({ path: "latin.txt", old_string: "caf", new_string: "CAF" }, call());
  assert.equal(r.is_error, true);
  assert.match(r.content, /latin\.txt is not valid UTF-8; edit_file cannot edit it through the editor/);
  assert.deepEqual(writer.asked, []);
  const e = editor({ "bin.txt": "a\0b" });
  const read = createReadFileTool({ ...t.ctx(), files: e.files });
  assert.equal((await read.run({ path: "gone.txt" }, call())).content, "Cannot read gone.txt through the editor: no such buffer");
  assert.match((await read.run({ path: "bin.txt" }, call())).content, /bin\.txt is a binary file/);
});
