/*
 * The visible window of a list of blocks, each rendering to some lines. Only
 * the blocks in the window are rendered, so a frame costs the same for 10 or
 * 10,000 messages, and a scrolled-up view stays put while output arrives.
 */

/** Where a pane is scrolled: following the end, or anchored at a block's line at the top. */
export interface Scroll {
  follow: boolean;
  index: number;
  line: number;
}

export const FOLLOW: Scroll = { follow: true, index: 0, line: 0 };

/** What a pane shows: its lines and whether more is hidden above or below. */
export interface Window {
  lines: string[];
  /** The scroll position the window was drawn from (normalised). */
  scroll: Scroll;
  more: { above: boolean; below: boolean };
}

type LinesOf = (index: number) => string[];

/** The top anchor of the last `height` lines. */
function tailAnchor(count: number, linesOf: LinesOf, height: number): Scroll {
  let need = height;
  for (let i = count - 1; i >= 0; i--) {
    const n = linesOf(i).length;
    if (n >= need) return { follow: false, index: i, line: n - need };
    need -= n;
  }
  return { follow: false, index: 0, line: 0 };
}

/** The lines shown for a scroll position; a position past the end follows the end. */
export function windowOf(count: number, linesOf: LinesOf, scroll: Scroll, height: number): Window {
  if (height <= 0 || count === 0) return { lines: [], scroll, more: { above: false, below: false } };
  const top = scroll.follow ? tailAnchor(count, linesOf, height) : clampAnchor(count, linesOf, scroll);
  const lines: string[] = [];
  let i = top.index;
  let line = top.line;
  while (i < count && lines.length < height) {
    const block = linesOf(i);
    for (; line < block.length && lines.length < height; line++) lines.push(block[line]!);
    if (line >= block.length) {
      i++;
      line = 0;
    }
  }
  const below = i < count;
  if (!scroll.follow && lines.length < height && (top.index > 0 || top.line > 0)) {
    // Scrolled past the end (the content shrank or the pane grew): show the end instead.
    return windowOf(count, linesOf, { ...FOLLOW }, height);
  }
  const above = top.index > 0 || top.line > 0;
  return { lines, scroll: scroll.follow || !below ? { ...FOLLOW } : top, more: { above, below } };
}

function clampAnchor(count: number, linesOf: LinesOf, s: Scroll): Scroll {
  if (s.index >= count) return { follow: false, index: count - 1, line: 0 };
  const n = linesOf(s.index).length;
  return { follow: false, index: s.index, line: Math.max(0, Math.min(s.line, n - 1)) };
}

/** The scroll position `delta` lines further down (negative: up). Reaching the end follows it again. */
export function scrollBy(count: number, linesOf: LinesOf, scroll: Scroll, height: number, delta: number): Scroll {
  if (count === 0) return { ...FOLLOW };
  let { index, line } = scroll.follow ? tailAnchor(count, linesOf, height) : clampAnchor(count, linesOf, scroll);
  if (delta < 0) {
    let up = -delta;
    while (up > 0) {
      if (line >= up) {
        line -= up;
        up = 0;
      } else if (index === 0) {
        line = 0;
        up = 0;
      } else {
        up -= line + 1;
        index--;
        line = linesOf(index).length - 1;
      }
    }
    return { follow: false, index, line: Math.max(0, line) };
  }
  let down = delta;
  while (down > 0 && index < count) {
    const n = linesOf(index).length;
    if (line + down < n) {
      line += down;
      down = 0;
    } else {
      down -= n - line;
      index++;
      line = 0;
    }
  }
  if (index >= count) return { ...FOLLOW };
  const w = windowOf(count, linesOf, { follow: false, index, line }, height);
  return w.scroll;
}
