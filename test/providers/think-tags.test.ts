import assert from "node:assert/strict";
import { test } from "node:test";
import { createThinkTagSplitter, type ThinkSegment } from "../../app/providers/think-tags.js";

/** Feeds the chunks and merges adjacent same-kind segments, as a consumer sees them. */
function run(chunks: string[]): ThinkSegment[] {
  const splitter = createThinkTagSplitter();
  const all = [...chunks.flatMap((c) => splitter.push(c)), ...splitter.flush()];
  const merged: ThinkSegment[] = [];
  for (const s of all) {
    const last = merged[merged.length - 1];
    if (last && last.kind === s.kind) last.text += s.text;
    else merged.push({ ...s });
  }
  return merged;
}

const CASES: { input: string; expected: ThinkSegment[] }[] = [
  { input: "plain answer", expected: [{ kind: "text", text: "plain answer" }] },
  {
    input: "<think>\nweighing options\n</think>\n\nThe answer is 4.",
    expected: [
      { kind: "thinking", text: "weighing options\n" },
      { kind: "text", text: "The answer is 4." },
    ],
  },
  {
    input: "Before <think>inner</think> after",
    expected: [
      { kind: "text", text: "Before " },
      { kind: "thinking", text: "inner" },
      { kind: "text", text: "after" },
    ],
  },
  { input: "a < b and <thin ice> and </think>", expected: [{ kind: "text", text: "a < b and <thin ice> and </think>" }] },
  { input: "<think></think>Just text", expected: [{ kind: "text", text: "Just text" }] },
  { input: "<think>never closed <thi", expected: [{ kind: "thinking", text: "never closed <thi" }] },
  { input: "ends with <thi", expected: [{ kind: "text", text: "ends with <thi" }] },
  {
    input: "<think>a</think><think>b</think>c",
    expected: [
      { kind: "thinking", text: "ab" },
      { kind: "text", text: "c" },
    ],
  },
];

test("whole input in one chunk", () => {
  for (const { input, expected } of CASES) assert.deepEqual(run([input]), expected, input);
});

test("split into two chunks at every character boundary", () => {
  for (const { input, expected } of CASES) {
    for (let i = 0; i <= input.length; i++) {
      assert.deepEqual(run([input.slice(0, i), input.slice(i)]), expected, `${JSON.stringify(input)} split at ${i}`);
    }
  }
});

test("one character per chunk, and three-way splits", () => {
  for (const { input, expected } of CASES) {
    assert.deepEqual(run([...input]), expected, input);
    for (let i = 0; i <= input.length; i++) {
      for (let j = i; j <= input.length; j++) {
        assert.deepEqual(run([input.slice(0, i), input.slice(i, j), input.slice(j)]), expected, `${input} at ${i},${j}`);
      }
    }
  }
});

test("holds back only what could still become a tag", () => {
  const splitter = createThinkTagSplitter();
  assert.deepEqual(splitter.push("Hello <th"), [{ kind: "text", text: "Hello " }]);
  assert.deepEqual(splitter.push("e end"), [{ kind: "text", text: "<the end" }]);
  assert.deepEqual(splitter.push("x <"), [{ kind: "text", text: "x " }]);
  assert.deepEqual(splitter.push(" y"), [{ kind: "text", text: "< y" }]);
  assert.deepEqual(splitter.push("<think>deep</thi"), [{ kind: "thinking", text: "deep" }]);
  assert.deepEqual(splitter.push("nk>"), []);
  assert.deepEqual(splitter.push("done"), [{ kind: "text", text: "done" }]);
  assert.deepEqual(splitter.flush(), []);
});

test("text never leaks a tag fragment when it arrives one char at a time", () => {
  const splitter = createThinkTagSplitter();
  const out = [..."x<think>y</think>z"].flatMap((c) => splitter.push(c)).concat(splitter.flush());
  assert.ok(out.every((s) => !s.text.includes("<") && !s.text.includes(">")), JSON.stringify(out));
});
