import { test } from "node:test";
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { readCommands } from "../../app/headless/command-reader.js";

/** What readCommands makes of `chunks`: commands' kinds and ids, and the refusals. */
async function read(chunks: (string | Buffer)[]) {
  const seen: string[] = [];
  await new Promise<void>((resolve) =>
    readCommands(Readable.from(chunks), {
      command: (c) => seen.push(`${c.kind}:${String(c.id)}`),
      invalid: (message) => seen.push(`invalid:${message}`),
      end: resolve,
    }));
  return seen;
}

// A .NET client's StreamWriter with Encoding.UTF8, or PowerShell 5 piping into a program, starts the
// stream with a UTF-8 byte order mark: its first command was refused as "not JSON" (found by
// piping printf '\xef\xbb\xbf{…}' into keen stdio).
test("a byte order mark at the start of the input is skipped: the first command is read", async () => {
  assert.deepEqual(await read(['\uFEFF{"kind":"list-models","id":1}\n{"kind":"list-models","id":2}\n']), ["list-models:1", "list-models:2"]);
  // Split across chunks, byte by byte.
  const bytes = Buffer.from('\uFEFF{"kind":"list-models","id":3}\n');
  assert.deepEqual(await read([...bytes].map((b) => Buffer.from([b]))), ["list-models:3"]);
});

test("only the stream's first bytes may be a byte order mark: one on a later line is still not JSON", async () => {
  const seen = await read(['{"kind":"list-models","id":1}\n\uFEFF{"kind":"list-models","id":2}\n']);
  assert.equal(seen[0], "list-models:1");
  assert.match(seen[1]!, /^invalid:not JSON/);
});
