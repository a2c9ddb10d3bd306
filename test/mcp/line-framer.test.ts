import { test } from "node:test";
import assert from "node:assert/strict";
import { createLineFramer } from "../../app/mcp/line-framer.js";

function framer(maxBytes = 1024) {
  const lines: string[] = [];
  const overflows: number[] = [];
  const f = createLineFramer({ maxBytes, onLine: (line) => lines.push(line), onOverflow: (bytes) => overflows.push(bytes) });
  return { f, lines, overflows };
}

test("lines split across chunks, several in one chunk, CRLF, blank lines skipped", () => {
  const { f, lines } = framer();
  f.push(Buffer.from('{"a":1}\n{"b"'));
  f.push(Buffer.from(":2}"));
  f.push(Buffer.from('\r\n\n  \n{"c":3}\n{"d":4}\n'));
  assert.deepEqual(lines, ['{"a":1}', '{"b":2}', '{"c":3}', '{"d":4}']);
});

test("a UTF-8 character split across chunks comes out whole", () => {
  const { f, lines } = framer();
  const bytes = Buffer.from('"héllo ✓"\n');
  for (const byte of bytes) f.push(Buffer.from([byte]));
  assert.deepEqual(lines, ['"héllo ✓"']);
});

test("a line of exactly maxBytes passes; one byte more overflows once, and nothing is read after", () => {
  const { f, lines, overflows } = framer(10);
  f.push(Buffer.from("0123456789\n"));
  assert.deepEqual(lines, ["0123456789"]);
  f.push(Buffer.from("01234"));
  f.push(Buffer.from("567890"));
  assert.deepEqual(overflows, [11]);
  f.push(Buffer.from("\nlater\n"));
  assert.deepEqual([lines, overflows], [["0123456789"], [11]]);
});

test("a stream that never sends a newline is stopped at maxBytes: the framer holds no more than that", () => {
  const { f, overflows } = framer(1 << 20);
  const chunk = Buffer.alloc(65536, "x");
  let pushed = 0;
  while (!overflows.length && pushed < 64 << 20) {
    f.push(chunk);
    pushed += chunk.length;
  }
  assert.equal(pushed, (1 << 20) + 65536, "stopped at the first chunk past the cap");
  assert.deepEqual(overflows, [(1 << 20) + 65536]);
});

test("a long line in many small chunks is joined once, as one message", () => {
  const { f, lines } = framer(64 << 20);
  const chunk = Buffer.alloc(65536, "y");
  // 16 MiB in 64 KiB chunks: with a rescan of the whole buffer per chunk this was quadratic.
  for (let i = 0; i < 256; i++) f.push(chunk);
  f.push(Buffer.from("\n"));
  assert.equal(lines.length, 1);
  assert.equal(lines[0]!.length, 16 << 20);
});
