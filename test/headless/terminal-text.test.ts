import { test } from "node:test";
import assert from "node:assert/strict";
import { terminalText } from "../../app/headless/terminal-text.js";
import { createStderrReporter, createTextOutput } from "../../app/headless/final-output.js";
import type { KeenEvent } from "../../protocol/events.js";

const HOSTILE = "\x1b]0;pwned\x07title \x1b]52;c;ZXZpbA==\x1b\\ \x1b[2J\x1b[31mred\x1b[0m \x9b31m \u202Egnp.exe\u202C a\rb\x08\x7f\x00";

test("escape sequences and control characters are made visible, nothing that drives a terminal is left", () => {
  const out = terminalText(HOSTILE);
  assert.equal(out, "␛]0;pwned␇title ␛]52;c;ZXZpbA==␛\\ ␛[2J␛[31mred␛[0m <U+009B>31m <U+202E>gnp.exe<U+202C> a␍b␈␡␀");
  assert.doesNotMatch(out, /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
});

test("ordinary text, newlines, tabs, CRLF and non-Latin text pass unchanged (the same string)", () => {
  const plain = "line 1\n\tindented — ünïcødé 日本語 🙂\r\nlast";
  assert.equal(terminalText(plain), plain);
  assert.equal(terminalText(""), "");
});

const result = (text: string) => ({
  kind: "result", session_id: "s", opencode_session_id: "s", text, status: "success", is_error: false, errors: [],
  num_turns: 1, duration_ms: 1, usage: { input_tokens: 0, cached_tokens: 0, cache_write_tokens: 0, output_tokens: 0, reasoning_tokens: 0, total_tokens: 0 },
  conversation_id: "s", ts: 0,
}) as KeenEvent;

test("text output: made visible on a terminal, exact bytes when piped", async () => {
  const written: string[] = [];
  const sink = { write: (s: string) => void written.push(s), flush: async () => {}, gone: false };
  await createTextOutput(sink, true)(result(HOSTILE));
  await createTextOutput(sink, false)(result(HOSTILE));
  assert.deepEqual(written, [`${terminalText(HOSTILE)}\n`, `${HOSTILE}\n`]);
});

test("the stderr reporter makes control sequences in errors and retry reasons visible", () => {
  const lines: string[] = [];
  const report = createStderrReporter((l) => lines.push(l));
  report({ kind: "error", message: "boom \x1b]0;x\x07", conversation_id: "s", ts: 0 });
  report({ kind: "retry", role: "assistant", attempt: 2, reason: "\x1b[2J500", delay_ms: 1000, conversation_id: "s", ts: 0 });
  assert.deepEqual(lines, ["keen: error: boom ␛]0;x␇\n", "keen: retrying in 1.0s (attempt 2): ␛[2J500\n"]);
});
