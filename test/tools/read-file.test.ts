import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, ftruncateSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { READ_MAX_BYTES, READ_MAX_LINES, createReadFileTool } from "../../app/tools/read-file.js";
import { call, tempWorkspace } from "./helpers.js";
import { makePng } from "../fakes/png.js";

const t = tempWorkspace();
const numbered = (from: number, lines: string[]) => lines.map((l, i) => `${String(from + i).padStart(6)}\t${l}`).join("\n");
const many = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`);
t.write({
  "a.txt": "alpha\nbeta\ngamma\n",
  "crlf.txt": "one\r\ntwo\r\n",
  "sub/rel.txt": "relative\n",
  "big.txt": many(2500).join("\n") + "\n",
  "wide.txt": Array.from({ length: 200 }, () => "x".repeat(1000)).join("\n"),
  "long-line.txt": "y".repeat(5000),
  "empty.txt": "",
  "image.png": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]),
  "blob.bin": Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]),
  ".env": "SECRET=1\n",
});
const read = createReadFileTool(t.ctx());

test("reads a file with cat -n style numbers", async () => {
  const r = await read.run({ path: "a.txt" }, call());
  assert.equal(r.is_error, false);
  assert.equal(r.content, numbered(1, ["alpha", "beta", "gamma"]));
  assert.deepEqual(r.details, { path: join(t.ws, "a.txt"), total_lines: 3, start_line: 1, end_line: 3, truncated: false });
});

test("offset and limit select a line range, with a note on how to go on", async () => {
  const r = await read.run({ path: "big.txt", offset: 10, limit: 3 }, call());
  assert.equal(r.content, `${numbered(10, ["line 10", "line 11", "line 12"])}\n\n[Showing lines 10-12 of 2500. Use offset=13 to read more.]`);
  const tail = await read.run({ path: "big.txt", offset: 2499 }, call());
  assert.equal(tail.content, numbered(2499, ["line 2499", "line 2500"]));
});

test(`at most ${READ_MAX_LINES} lines per call`, async () => {
  const r = await read.run({ path: "big.txt" }, call());
  assert.ok(r.content.endsWith(`${numbered(2000, ["line 2000"])}\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to read more.]`));
  assert.equal(r.details?.truncated, true);
  const capped = await read.run({ path: "big.txt", limit: 5000 }, call());
  assert.equal(capped.details?.end_line, 2000);
});

test(`at most ${READ_MAX_BYTES / 1024} KB per call`, async () => {
  const r = await read.run({ path: "wide.txt" }, call());
  assert.ok(Buffer.byteLength(r.content) <= READ_MAX_BYTES + 200);
  assert.equal(r.details?.end_line, 101);
  assert.match(r.content, /\[Showing lines 1-101 of 200\. Use offset=102 to read more\.\]$/);
});

test("very long lines are shortened", async () => {
  const r = await read.run({ path: "long-line.txt" }, call());
  assert.equal(r.content, `     1\t${"y".repeat(2000)}... [line shortened: 5000 characters]`);
});

test("CRLF endings are not shown; relative paths resolve against cwd", async () => {
  assert.equal((await read.run({ path: "crlf.txt" }, call())).content, numbered(1, ["one", "two"]));
  const fromSub = createReadFileTool(t.ctx("sub"));
  assert.equal((await fromSub.run({ path: "rel.txt" }, call())).content, numbered(1, ["relative"]));
});

test("refusals and failures are error results written for the model", async () => {
  const cases: [unknown, RegExp][] = [
    [{ path: "blob.bin" }, /^blob\.bin is a binary file/],
    // Named as an image, read as one: a broken one says so.
    [{ path: "image.png" }, /^image\.png is not an image Keen can send \(png, jpeg, gif or webp\)\.$/],
    [{ path: "sub" }, /^sub is a directory; use the list tool/],
    [{ path: "missing.txt" }, /^File not found: missing\.txt$/],
    [{ path: "a.txt", offset: 9 }, /^offset 9 is past the end of a\.txt, which has 3 lines\.$/],
    [{ path: ".env" }, /^Refused: .*\.env is an environment file/],
    [{ path: join(t.home, ".ssh", "id_rsa") }, /^Refused: .* is a credential file/],
    [{ path: "a.txt", offset: 0 }, /^Invalid input for read_file:/],
    [{}, /^Invalid input for read_file:/],
  ];
  for (const [input, pattern] of cases) {
    const r = await read.run(input, call());
    assert.equal(r.is_error, true, JSON.stringify(input));
    assert.match(r.content, pattern);
  }
});

test("an empty file says so", async () => {
  const r = await read.run({ path: "empty.txt" }, call());
  assert.equal(r.is_error, false);
  assert.equal(r.content, "(empty.txt is empty)");
});

test("files over 10 MB are refused", async () => {
  mkdirSync(join(t.ws, "huge"), { recursive: true });
  const fd = openSync(join(t.ws, "huge", "log.txt"), "w");
  ftruncateSync(fd, 11 * 1024 * 1024);
  closeSync(fd);
  const r = await read.run({ path: "huge/log.txt" }, call());
  assert.equal(r.is_error, true);
  assert.match(r.content, /^huge\/log\.txt is 11\.0 MB; read_file refuses files over 10 MB\./);
});

test("a FIFO is refused instead of blocking forever", async () => {
  execFileSync("mkfifo", [join(t.ws, "pipe")]);
  const r = await read.run({ path: "pipe" }, call());
  assert.equal(r.is_error, true);
  assert.equal(r.content, "pipe is not a regular file.");
});

test("an image file comes back as an image with a one-line description; the details say its size", async () => {
  const png = makePng(20, 10);
  t.write({ "shot.png": png });
  const r = await read.run({ path: "shot.png" }, call());
  assert.equal(r.is_error, false, r.content);
  assert.equal(r.content, `Image shot.png (png, 20x10, ${png.length} bytes), attached.`);
  assert.deepEqual(r.images, [{ media_type: "image/png", data: png.toString("base64") }]);
  assert.deepEqual(r.details?.image, { media_type: "image/png", width: 20, height: 10, bytes: png.length });
});
