import { test } from "node:test";
import assert from "node:assert/strict";
import { KeyDecoder, keyId, type InputEvent } from "../../app/tui/keys.js";

const ids = (events: InputEvent[]) => events.map((e) => (e.type === "key" ? keyId(e) : e.type === "mouse" ? `mouse:${e.action}` : e.type === "focus" ? `focus:${e.focused ? "in" : "out"}` : `${e.type}:${e.text}`));

test("keys the keymap needs, including ones blessed gets wrong", () => {
  const k = new KeyDecoder();
  assert.deepEqual(ids(k.push("\r")), ["enter"]);
  assert.deepEqual(ids(k.push("\x1b\r")), ["M-enter"]);
  assert.deepEqual(ids(k.push("\n")), ["C-j"]);
  assert.deepEqual(ids(k.push("\x1b[13;2u")), ["S-enter"]);
  assert.deepEqual(ids(k.push("\x1b[27;2;13~")), ["S-enter"]);
  assert.deepEqual(ids(k.push("\x1b[Z")), ["S-tab"]);
  assert.deepEqual(ids(k.push("\x03\x04\x0c\x07\t")), ["C-c", "C-d", "C-l", "C-g", "tab"]);
  assert.deepEqual(ids(k.push("\x1b[5~\x1b[6~\x1b[A\x1bOB\x1b[1;5C")), ["pageup", "pagedown", "up", "down", "C-right"]);
  assert.deepEqual(ids(k.push("\x1bb\x7f")), ["M-b", "backspace"]);
  assert.deepEqual(ids(k.push("héllo 中")), ["text:héllo 中"]);
  assert.deepEqual(ids(k.push("\x1b[<64;10;5M\x1b[<65;10;5M")), ["mouse:wheelup", "mouse:wheeldown"]);
});

test("a lone ESC waits for the rest of a sequence, then counts as Esc", () => {
  const k = new KeyDecoder();
  assert.deepEqual(k.push("\x1b"), []);
  assert.equal(k.waiting, true);
  assert.deepEqual(ids(k.flushEscape()), ["escape"]);
  assert.deepEqual(k.push("\x1b"), []);
  assert.deepEqual(ids(k.push("[A")), ["up"], "a sequence split over chunks");
});

test("bracketed paste is one event, its newlines never act as Enter, even split over chunks", () => {
  const k = new KeyDecoder();
  assert.deepEqual(ids(k.push("a\x1b[200~line 1\r\nline 2\x1b[201~\r")), ["text:a", "paste:line 1\nline 2", "enter"]);
  assert.deepEqual(k.push("\x1b[20"), []);
  assert.deepEqual(k.push("0~first\rsecond\x1b[2"), []);
  assert.deepEqual(ids(k.push("01~")), ["paste:first\nsecond"]);
});

test("several lines in one chunk without paste brackets count as a paste", () => {
  assert.deepEqual(ids(new KeyDecoder().push("one\rtwo\r")), ["paste:one\ntwo\n"]);
  assert.deepEqual(ids(new KeyDecoder().push("one\r")), ["text:one", "enter"]);
});

test("focus reports (mode 1004), Alt-letters and Ctrl-Z", () => {
  const k = new KeyDecoder();
  assert.deepEqual(ids(k.push("\x1b[O\x1b[I")), ["focus:out", "focus:in"]);
  assert.deepEqual(ids(k.push("\x1bz\x1bt\x1bd\x1bm\x1a")), ["M-z", "M-t", "M-d", "M-m", "C-z"]);
});
