import { test } from "node:test";
import assert from "node:assert/strict";
import { Editor } from "../../app/tui/editor.js";

test("typing, moving and deleting across lines and wide characters", () => {
  const e = new Editor();
  e.insert("hello");
  e.insert("\n");
  e.insert("wor😀ld");
  e.left();
  e.left();
  e.backspace();
  assert.equal(e.value(), "hello\nworld");
  e.up();
  assert.equal(e.cursor, 3);
  e.killToLineEnd();
  assert.equal(e.value(), "hel\nworld");
  e.lineStart();
  e.killToLineEnd();
  e.killToLineEnd();
  assert.equal(e.value(), "world");
  e.lineEnd();
  e.deleteWordBack();
  assert.equal(e.value(), "");
});

test("a long paste collapses to one marker and is sent in full", () => {
  const e = new Editor();
  const block = Array.from({ length: 412 }, (_, i) => `line ${i}`).join("\n");
  e.insert("see: ");
  e.paste(block);
  assert.equal([...e.text].length, 6);
  assert.equal(e.value(), `see: ${block}`);
  e.backspace();
  assert.equal(e.value(), "see: ", "backspace removes the whole paste");
  e.paste("short\npaste");
  assert.equal(e.text, "see: short\npaste");
});

test("history: Up recalls earlier prompts, Down comes back to the draft", () => {
  const e = new Editor(["first", "second"]);
  e.insert("draft");
  e.up();
  assert.equal(e.value(), "second");
  e.up();
  assert.equal(e.value(), "first");
  e.up();
  assert.equal(e.value(), "first");
  e.down();
  e.down();
  assert.equal(e.value(), "draft");
  e.setText("third");
  assert.equal(e.take(), "third");
  e.up();
  assert.equal(e.value(), "third");
});

test("cursor moves and deletes take whole grapheme clusters: flags, skin tones, ZWJ families, combining marks", () => {
  for (const cluster of ["🇯🇵", "👍🏽", "👨‍👩‍👧", "e\u0301"]) {
    const e = new Editor();
    e.insert(`a${cluster}b`);
    e.left();
    e.left();
    assert.equal(e.cursor, 1, cluster);
    e.right();
    assert.equal(e.cursor, 1 + cluster.length, cluster);
    e.backspace();
    assert.equal(e.text, "ab", cluster);
    e.insert(cluster);
    e.left();
    e.delete();
    assert.equal(e.text, "ab", cluster);
  }
});
