import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createServerLog } from "../../app/mcp/server-log.js";
import { createRedactor } from "../../app/permissions/redact.js";
import { terminalText } from "../../app/headless/terminal-text.js";
import { makeTempDir } from "../temp.js";

test("a server log hides secrets (even split across chunks) and makes control characters visible; CRLF stays", () => {
  const dir = makeTempDir("keen-mcp-log-");
  const file = join(dir, "logs", "s.log");
  const log = createServerLog(file, { redactor: createRedactor(["tok_SECRET_1234"]), visible: terminalText });
  log.push("starting\r");
  log.push("\nkey tok_SEC");
  log.push("RET_1234 used\n\x1b]0;title\x07\x1b[2J");
  log.push("bare\rcr\n");
  log.end();
  assert.equal(readFileSync(file, "utf8"), "starting\r\nkey [redacted] used\n␛]0;title␇␛[2Jbare␍cr\n");
});

test("a server log is rotated past its cap: the current file and one older one, never more", () => {
  const dir = makeTempDir("keen-mcp-log-");
  const file = join(dir, "s.log");
  writeFileSync(file, "from an earlier session\n");
  const log = createServerLog(file, { maxBytes: 100 });
  const line = (n: number) => `line ${String(n).padStart(3, "0")} ${"z".repeat(30)}\n`;
  for (let i = 0; i < 20; i++) log.push(line(i));
  log.end();
  const current = readFileSync(file, "utf8");
  const older = readFileSync(`${file}.1`, "utf8");
  assert.ok(current.length <= 100 && older.length <= 100, `${current.length} ${older.length}`);
  assert.ok(current.endsWith(line(19)), "the newest output is in the current file");
  assert.ok(older.endsWith(line(19 - current.length / line(0).length)), "the one before it in the rotated file");
  assert.equal(existsSync(`${file}.2`), false);
  // One chunk larger than the cap keeps its end.
  const big = createServerLog(join(dir, "b.log"), { maxBytes: 10 });
  big.push("0123456789abcdef");
  big.end();
  assert.equal(readFileSync(join(dir, "b.log"), "utf8"), "6789abcdef");
});

test("a log that cannot be written is dropped without an error", () => {
  const dir = makeTempDir("keen-mcp-log-");
  writeFileSync(join(dir, "file"), "");
  const log = createServerLog(join(dir, "file", "s.log"));
  log.push("nowhere to go\n");
  log.end();
});
