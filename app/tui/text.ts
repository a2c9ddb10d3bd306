/*
 * Cell widths and safe text. Every string from the model, a tool or a file
 * passes through `sanitize` before any view styles it, so the only escape
 * sequences blessed ever sees are the SGR codes the views add themselves.
 */
import { graphemes } from "./graphemes.js";

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]$/u;
const EMOJI_WIDE = /^\p{Emoji_Presentation}$/u;
const EMOJI_WIDE_ALL = /\p{Emoji_Presentation}/gu;

// East Asian Wide and Fullwidth ranges (the same as blessed's table, so both agree on CJK).
const WIDE: [number, number][] = [
  [0x1100, 0x115f], [0x11a3, 0x11a7], [0x11fa, 0x11ff], [0x2329, 0x232a], [0x2e80, 0x2e99], [0x2e9b, 0x2ef3],
  [0x2f00, 0x2fd5], [0x2ff0, 0x2ffb], [0x3000, 0x303e], [0x3041, 0x3096], [0x3099, 0x30ff], [0x3105, 0x312d],
  [0x3131, 0x318e], [0x3190, 0x31ba], [0x31c0, 0x31e3], [0x31f0, 0x321e], [0x3220, 0x3247], [0x3250, 0x32fe],
  [0x3300, 0x4dbf], [0x4e00, 0xa48c], [0xa490, 0xa4c6], [0xa960, 0xa97c], [0xac00, 0xd7a3], [0xd7b0, 0xd7c6],
  [0xd7cb, 0xd7fb], [0xf900, 0xfaff], [0xfe10, 0xfe19], [0xfe30, 0xfe52], [0xfe54, 0xfe66], [0xfe68, 0xfe6b],
  [0xff01, 0xff60], [0xffe0, 0xffe6], [0x1b000, 0x1b001], [0x1f200, 0x1f202], [0x1f210, 0x1f23a],
  [0x1f240, 0x1f248], [0x1f250, 0x1f251], [0x20000, 0x2fffd], [0x30000, 0x3fffd],
];

const widthCache = new Map<number, number>();

/** Terminal cells one code point takes: 0 (controls, combining marks), 1, or 2 (CJK, emoji). */
export function charWidth(cp: number): number {
  if (cp >= 0x20 && cp < 0x7f) return 1;
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  let w = widthCache.get(cp);
  if (w === undefined) {
    const ch = String.fromCodePoint(cp);
    // Regional indicators (two make a flag) are one cell each in wcwidth, blessed and xterm.js: counting
    // them as emoji put the input box's border two cells off for every flag.
    w = ZERO_WIDTH.test(ch) ? 0 : cp >= 0x1f1e6 && cp <= 0x1f1ff ? 1 : WIDE.some(([a, b]) => cp >= a && cp <= b) || EMOJI_WIDE.test(ch) ? 2 : 1;
    widthCache.set(cp, w);
  }
  return w;
}

/** SGR sequences: the only escapes view output contains. */
export const SGR = /\x1b\[[0-9;]*m/g;

/** Cells a string takes on screen, SGR codes not counted. */
export function textWidth(text: string): number {
  let w = 0;
  const plain = text.includes("\x1b") ? text.replace(SGR, "") : text;
  for (const ch of plain) w += charWidth(ch.codePointAt(0)!);
  return w;
}

const BIDI = /[\u202a-\u202e\u2066-\u2069]/g;

/**
 * Untrusted text made safe to draw: `\r\n` and a lone `\r` become newlines,
 * tabs become spaces to the next stop of 4, ESC shows as `␛` (so `␛[31m` is
 * visible text, not colour), other C0 controls as their control pictures,
 * C1 controls and bidi overrides (which reorder what the user reads) are
 * dropped. Blessed tags need nothing: every box draws with tags off.
 */
export function sanitize(text: string): string {
  let out = text.replace(/\r\n?/g, "\n");
  if (/[\x00-\x08\x0b-\x1f\x7f-\x9f]/.test(out)) {
    out = out.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, (c) => {
      const code = c.charCodeAt(0);
      if (code === 0x7f) return "\u2421";
      if (code >= 0x80) return "";
      return String.fromCharCode(0x2400 + code);
    });
  }
  if (BIDI.test(out)) out = out.replace(BIDI, "");
  return out.includes("\t") ? expandTabs(out) : out;
}

function expandTabs(text: string): string {
  return text
    .split("\n")
    .map((line) => {
      let col = 0;
      let out = "";
      for (const ch of line) {
        if (ch === "\t") {
          const n = 4 - (col % 4);
          out += " ".repeat(n);
          col += n;
        } else {
          out += ch;
          col += charWidth(ch.codePointAt(0)!);
        }
      }
      return out;
    })
    .join("\n");
}

/** Escape sequences other than SGR (OSC 8 links, cursor moves) dropped from trusted library output. */
export function onlySgr(text: string): string {
  return text
    .replace(/\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, "")
    .replace(/\x1b\[(?![0-9;]*m)[0-?]*[ -/]*[@-~]/g, "")
    .replace(/\x1b(?!\[[0-9;]*m)/g, "")
    .replace(/[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]/g, "");
}

/** SGR with the colour parameters removed (NO_COLOR), keeping bold, underline and inverse. */
export function dropColors(text: string): string {
  return text.replace(SGR, (seq) => {
    const params = seq.slice(2, -1).split(";");
    const kept: string[] = [];
    for (let i = 0; i < params.length; i++) {
      const p = Number(params[i] || 0);
      if (p === 38 || p === 48) {
        i += params[i + 1] === "5" ? 2 : 4;
        continue;
      }
      if ((p >= 30 && p <= 37) || (p >= 40 && p <= 47) || (p >= 90 && p <= 107) || p === 39 || p === 49) continue;
      kept.push(String(p));
    }
    return kept.length ? `\x1b[${kept.join(";")}m` : "";
  });
}

/**
 * Pieces of a styled line: SGR codes, and grapheme clusters with their
 * widths, so a wrap or a cut never splits a flag, a skin-toned or ZWJ emoji
 * or a letter from its accent.
 */
function* pieces(line: string): Generator<{ sgr?: string; ch?: string; w: number }> {
  let i = 0;
  while (i < line.length) {
    if (line.charCodeAt(i) === 0x1b) {
      const m = /^\x1b\[[0-9;]*m/.exec(line.slice(i, i + 40));
      if (m) {
        yield { sgr: m[0], w: 0 };
        i += m[0].length;
        continue;
      }
    }
    const esc = line.indexOf("\x1b", i + 1);
    const run = line.slice(i, esc < 0 ? line.length : esc);
    for (const { segment } of graphemes(run)) {
      let w = 0;
      for (const ch of segment) w += charWidth(ch.codePointAt(0)!);
      yield { ch: segment, w };
    }
    i += run.length;
  }
}

const RESET = "\x1b[0m";

/**
 * One styled line cut into lines of at most `width` cells, at the last space
 * when there is one, mid-word otherwise; styles open at a cut are closed and
 * reopened so every line stands alone (the transcript draws any window of
 * them). `hang` indents continuation lines (list items).
 */
export function wrapLine(line: string, width: number, hang = 0): string[] {
  if (width < 1) width = 1;
  if (textWidth(line) <= width) return [line];
  if (hang > width / 2) hang = 0;
  const out: string[] = [];
  let limit = width;
  let active = "";
  let cur = "";
  let curW = 0;
  let lineOpen = "";
  let lastSpace = -1; // index in cur just after the last space
  let lastSpaceW = 0;
  let lastSpaceActive = "";
  const flush = (text: string) => {
    const body = lineOpen + text + (lineOpen || text.includes("\x1b[") ? RESET : "");
    out.push(out.length && hang ? " ".repeat(hang) + body : body);
    limit = width - hang;
  };
  for (const p of pieces(line)) {
    if (p.sgr) {
      active = /^\x1b\[0?m$/.test(p.sgr) ? "" : active + p.sgr;
      cur += p.sgr;
      continue;
    }
    if (curW + p.w > limit && curW > 0) {
      if (lastSpace > 0 && p.ch !== " " && curW - lastSpaceW + p.w <= width - hang) {
        flush(cur.slice(0, lastSpace).trimEnd());
        cur = cur.slice(lastSpace);
        curW -= lastSpaceW;
        lineOpen = lastSpaceActive;
      } else {
        flush(cur);
        cur = "";
        curW = 0;
        lineOpen = active;
        lastSpace = -1;
        if (p.ch === " ") continue;
      }
      lastSpace = -1;
    }
    cur += p.ch;
    curW += p.w;
    if (p.ch === " ") {
      lastSpace = cur.length;
      lastSpaceW = curW;
      lastSpaceActive = active;
    }
  }
  if (cur || out.length === 0) flush(cur);
  return out;
}

/** Many lines (with `\n`) wrapped to a width. */
export function wrap(text: string, width: number): string[] {
  return text.split("\n").flatMap((line) => wrapLine(line, width));
}

/** A line cut to `width` cells, ending in `…` when cut. */
export function truncate(line: string, width: number): string {
  if (textWidth(line) <= width) return line;
  if (width <= 0) return "";
  let out = "";
  let w = 0;
  let styled = false;
  for (const p of pieces(line)) {
    if (p.sgr) {
      out += p.sgr;
      styled = true;
      continue;
    }
    if (w + p.w > width - 1) break;
    out += p.ch;
    w += p.w;
  }
  return out + "…" + (styled ? RESET : "");
}

/** Plain text (no colours) cut to `width` cells at its start, marked with a leading `…`: a path keeps its file name. */
export function truncateStart(text: string, width: number): string {
  if (textWidth(text) <= width) return text;
  if (width <= 0) return "";
  const chars = [...text];
  let kept = "";
  for (let i = chars.length - 1; i >= 0 && textWidth(chars[i] + kept) <= width - 1; i--) kept = chars[i] + kept;
  return `…${kept}`;
}

/** A line padded with spaces (or cut) to exactly `width` cells. */
export function fit(line: string, width: number): string {
  const w = textWidth(line);
  if (w > width) return truncate(line, width);
  return line + " ".repeat(width - w);
}

/** The first line of a text, trimmed and cut to `width`. */
export function oneLine(text: string, width: number): string {
  return truncate(sanitize(text).replace(/\s+/g, " ").trim(), width);
}

/**
 * A line made ready for blessed: ZWJ sequences split into their parts (which
 * keeps their cells: a joiner is zero-width), and, as blessed's width counting
 * gives an astral emoji (a surrogate pair plus the placeholder cell it needs)
 * one cell more than the terminal does, one trailing padding space per such
 * emoji goes.
 */
export function forBlessed(line: string): string {
  // A zero-width joiner never reaches the terminal: blessed keeps it only after a narrow character
  // (🏳️‍🌈, ❤️‍🔥), and tmux or a grapheme-aware terminal then merges the next emoji into that cell, so
  // everything after it lands a cell or two off and is overdrawn. Without it a sequence shows as its parts.
  if (line.includes("\u200d")) line = line.replace(/\u200d/g, "");
  let extra = 0;
  // Any astral character blessed draws (a flag's regional indicators too) is one unit longer than its cells.
  for (const ch of line) if (ch.length === 2 && charWidth(ch.codePointAt(0)!) > 0 && (charWidth(ch.codePointAt(0)!) === 1 || EMOJI_WIDE.test(ch))) extra++;
  let out = line;
  for (; extra > 0; extra--) {
    if (out.endsWith(" ")) out = out.slice(0, -1);
    else {
      // A full line (padding inside it, as in the tool panel): take the space from its last gap.
      const gap = out.lastIndexOf("  ");
      if (gap < 0) break;
      out = out.slice(0, gap) + out.slice(gap + 1);
    }
  }
  return out;
}

/**
 * A regex source (no `u` flag, surrogate pairs spelled out) matching every
 * emoji this module counts two cells wide that blessed's own table counts as
 * one; screen.ts adds it to blessed's table so both agree with the terminal.
 */
export function wideEmojiSource(): string {
  const bmp: number[] = [];
  const astral = new Map<number, number[]>();
  const scan = (from: number, to: number) => {
    // One regex pass over the whole range finds the emoji; testing each code point alone (and caching its width)
    // took ~15 ms of the TUI's first frame. Only the wide ranges that meet this one are looked at for each emoji.
    const codes: number[] = [];
    for (let cp = from; cp <= to; cp++) codes.push(cp);
    const range = String.fromCodePoint(...codes);
    const wide = WIDE.filter(([a, b]) => b >= from && a <= to);
    for (const [emoji] of range.matchAll(EMOJI_WIDE_ALL)) {
      const cp = emoji.codePointAt(0)!;
      // What charWidth counts 2 among these: all but the regional indicators (emoji are never zero-width).
      if ((cp >= 0x1f1e6 && cp <= 0x1f1ff) || wide.some(([a, b]) => cp >= a && cp <= b)) continue;
      if (cp <= 0xffff) bmp.push(cp);
      else {
        const s = String.fromCodePoint(cp);
        const hi = s.charCodeAt(0);
        if (!astral.has(hi)) astral.set(hi, []);
        astral.get(hi)!.push(s.charCodeAt(1));
      }
    }
  };
  scan(0x2000, 0x2bff);
  scan(0x1f000, 0x1faff);
  const u = (n: number) => `\\u${n.toString(16).padStart(4, "0")}`;
  const cls = (units: number[]) => units.map(u).join("");
  const parts = [...astral].map(([hi, los]) => `${u(hi)}[${cls(los)}]`);
  if (bmp.length) parts.push(`[${cls(bmp)}]`);
  return parts.join("|");
}
