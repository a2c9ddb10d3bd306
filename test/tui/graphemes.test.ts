import { test } from "node:test";
import assert from "node:assert/strict";
import { graphemes } from "../../app/tui/graphemes.js";

const icu = new Intl.Segmenter(undefined, { granularity: "grapheme" });
const byIcu = (text: string) => Array.from(icu.segment(text), ({ segment, index }) => ({ segment, index }));

/** Every character the fast path takes as a cluster of its own (app/tui/graphemes.ts). */
function singles(): string[] {
  const ranges: [number, number][] = [[0x20, 0x7e], [0xa0, 0x2ff], [0x2010, 0x2027], [0x2030, 0x205e], [0x2190, 0x23ff], [0x2500, 0x27bf]];
  return ranges.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => String.fromCodePoint(from + i)));
}

test("text of the fast path's characters splits as ICU splits it, in any order", () => {
  const chars = singles();
  // Each next to its neighbours, in order, reversed, and shuffled (seeded, so a failure repeats).
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const orders = [chars, [...chars].reverse(), ...Array.from({ length: 5 }, () => [...chars].sort(() => random() - 0.5))];
  for (const order of orders) {
    const text = order.join("");
    assert.deepEqual(graphemes(text), byIcu(text));
  }
});

test("anything else goes to ICU: combining marks, ZWJ emoji, flags, CR LF, Hangul jamo", () => {
  for (const text of ["e\u0301 café", "👩‍👩‍👧 ok", "🇫🇷🇩🇪", "a\r\nb", "\u1100\u1161\u11a8", "✔\ufe0f done", "→\u200d←"]) {
    assert.deepEqual(graphemes(text), byIcu(text), JSON.stringify(text));
  }
  assert.deepEqual(graphemes("e\u0301x").map((g) => g.segment), ["e\u0301", "x"]);
});
