import { test } from "node:test";
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { readCommands } from "../../app/headless/command-reader.js";
import { leadingId } from "../../app/headless/line-id.js";

/** What readCommands makes of `chunks` with a 100-byte limit: commands and refusals, each with its id. */
async function read(chunks: string[]) {
  const seen: unknown[] = [];
  await new Promise<void>((resolve) =>
    readCommands(Readable.from(chunks.map((c) => Buffer.from(c))), {
      command: (c) => seen.push(["command", c.kind, c.id]),
      invalid: (message, id) => seen.push(["invalid", message, id]),
      end: resolve,
    }, 100));
  return seen;
}

const long = "x".repeat(300);

test("a line too long is refused with its id when the id comes before the limit; reading goes on", async () => {
  assert.deepEqual(await read([`{"kind":"prompt","id":"p-1","text":"${long}"}\n{"kind":"list-models","id":2}\n`]), [
    ["invalid", "line too long: commands are limited to 100 bytes", "p-1"],
    ["command", "list-models", 2],
  ]);
  // Arriving in pieces, the id split across two of them.
  const line = `{"id": 17 ,"kind":"prompt","text":"${long}"}\n`;
  assert.deepEqual(await read([line.slice(0, 6), line.slice(6, 50), line.slice(50)]), [
    ["invalid", "line too long: commands are limited to 100 bytes", 17],
  ]);
});

test("an id past the line's first 64 KB is not looked for: the refusal has none", async () => {
  assert.deepEqual(await read([`{"kind":"prompt","text":"${"x".repeat(70_000)}","id":"late"}\n`]), [
    ["invalid", "line too long: commands are limited to 100 bytes", undefined],
  ]);
});

test("leadingId reads the command's own id only", () => {
  assert.equal(leadingId('{"kind":"prompt","id":"a\\"b","text":"'), 'a"b');
  assert.equal(leadingId('{ "id" : -3.5e2 , "text":"'), -350);
  // Inside a string, or a nested object's: not the command's.
  assert.equal(leadingId('{"text":"say \\"id\\": 1, please","id'), undefined);
  assert.equal(leadingId('{"attachments":[{"id":"img"}],"text":"'), undefined);
  assert.equal(leadingId('{"meta":{"id":5},"id":6,"text":"'), 6);
  // Cut before the value ends, or a value that is not an id.
  assert.equal(leadingId('{"id":"unfinish'), undefined);
  assert.equal(leadingId('{"id":12'), undefined);
  assert.equal(leadingId('{"id":null,"text":"'), undefined);
  assert.equal(leadingId('["id",1]'), undefined);
});
