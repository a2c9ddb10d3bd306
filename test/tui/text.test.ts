import { test } from "node:test";
import assert from "node:assert/strict";
import { charWidth, dropColors, fit, forBlessed, onlySgr, sanitize, textWidth, truncate, truncateStart, wideEmojiSource, wrap, wrapLine } from "../../app/tui/text.js";

test("sanitize makes escape sequences visible and drops what reorders or hides text", () => {
  assert.equal(sanitize("a\x1b[31mred\x1b[0m"), "a␛[31mred␛[0m");
  assert.equal(sanitize("bell\x07 nul\x00 del\x7f"), "bell␇ nul␀ del␡");
  assert.equal(sanitize("osc \x1b]52;c;aGk=\x07"), "osc ␛]52;c;aGk=␇");
  assert.equal(sanitize("c1 \u009b31m"), "c1 31m");
  assert.equal(sanitize("abc\u202edcba"), "abcdcba");
  assert.equal(sanitize("a\r\nb\rc"), "a\nb\nc");
  assert.equal(sanitize("\tx\ty"), "    x   y");
  assert.equal(sanitize("{bold}tags{/bold} stay literal"), "{bold}tags{/bold} stay literal");
});

test("onlySgr keeps colours and drops hyperlinks, cursor moves and stray controls", () => {
  assert.equal(onlySgr("\x1b]8;;http://x\x07link\x1b]8;;\x07 \x1b[2J\x1b[31mred\x1b[0m\x07"), "link \x1b[31mred\x1b[0m");
});

test("dropColors keeps bold, underline and inverse", () => {
  assert.equal(dropColors("\x1b[1;38;2;1;2;3mX\x1b[0m\x1b[31mY\x1b[39m"), "\x1b[1mX\x1b[0mY");
});

test("widths: CJK and emoji take two cells, combining marks none", () => {
  assert.equal(charWidth("中".codePointAt(0)!), 2);
  assert.equal(charWidth("😀".codePointAt(0)!), 2);
  assert.equal(charWidth(0x301), 0);
  assert.equal(textWidth("\x1b[31m中文ab\x1b[0m"), 6);
  assert.equal(textWidth("e\u0301"), 1);
});

test("wrapping at spaces, mid-word when needed, never splitting a wide char, styles reopened per line", () => {
  assert.deepEqual(wrap("the quick brown fox", 10), ["the quick", "brown fox"]);
  assert.deepEqual(wrapLine("abcdefghijkl", 5), ["abcde", "fghij", "kl"]);
  assert.deepEqual(wrapLine("中文中文中", 5), ["中文", "中文", "中"]);
  const styled = wrapLine("\x1b[31mred words here\x1b[0m", 9);
  assert.deepEqual(styled.map((l) => l.replace(/\x1b\[[0-9;]*m/g, "")), ["red words", "here"]);
  assert.ok(styled[1]!.startsWith("\x1b[31m"), "the second line reopens the colour");
  assert.deepEqual(wrapLine("- item with many words", 10, 2), ["- item", "  with", "  many", "  words"]);
});

test("truncate and fit count cells", () => {
  assert.equal(truncate("hello world", 8), "hello w…");
  assert.equal(fit("中文", 5), "中文 ");
  assert.equal(textWidth(fit("中文中文中文", 5)), 5);
});

test("forBlessed gives back the extra cell blessed counts for each astral emoji", () => {
  assert.equal(forBlessed("a 😀 b   "), "a 😀 b  ");
  assert.equal(forBlessed("x 😀  right"), "x 😀 right");
  assert.equal(forBlessed("中文 ✅ plain  "), "中文 ✅ plain  ");
});

test("wrapping and cutting never split a grapheme cluster", () => {
  const flags = "🇯🇵".repeat(5);
  for (const width of [3, 5, 7]) {
    for (const line of wrapLine(flags, width)) assert.match(line, /^(?:🇯🇵)+$/u, `width ${width}: ${JSON.stringify(line)}`);
  }
  const family = "ab👨‍👩‍👧";
  assert.equal(truncate(family, 5), "ab…");
  assert.deepEqual(wrapLine("e\u0301e\u0301e\u0301", 2), ["e\u0301e\u0301", "e\u0301"]);
});

test("truncateStart keeps the end of a path, counting cells", () => {
  assert.equal(truncateStart("src/deep/file.ts", 20), "src/deep/file.ts");
  assert.equal(truncateStart("src/deep/file.ts", 8), "…file.ts");
  // A wide character that would straddle the cut goes whole: never wider than asked.
  assert.equal(truncateStart("a/中文/x.ts", 8), "…文/x.ts");
  assert.equal(truncateStart("a/中文/x.ts", 7), "…/x.ts");
  assert.equal(truncateStart("abc", 0), "");
});

test("wideEmojiSource matches exactly the code points charWidth counts two cells that are emoji outside blessed's wide table", () => {
  const source = new RegExp(`^(?:${wideEmojiSource()})$`);
  const wide: [number, number][] = [[0x2329, 0x232a], [0x1f200, 0x1f202], [0x1f210, 0x1f23a], [0x1f240, 0x1f248], [0x1f250, 0x1f251]];
  let matched = 0;
  for (const [from, to] of [[0x2000, 0x2bff], [0x1f000, 0x1faff]] as const) {
    for (let cp = from; cp <= to; cp++) {
      const ch = String.fromCodePoint(cp);
      const expected = charWidth(cp) === 2 && /^\p{Emoji_Presentation}$/u.test(ch) && !wide.some(([a, b]) => cp >= a && cp <= b);
      assert.equal(source.test(ch), expected, `U+${cp.toString(16)}`);
      if (expected) matched++;
    }
  }
  assert.ok(matched > 1000, `${matched} emoji`);
});
