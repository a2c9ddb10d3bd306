import type { Theme } from "../../../themes/index.js";
import { lineCount, type Editor } from "../editor.js";
import { open, paint } from "../style.js";
import { sanitize, textWidth } from "../text.js";
import { graphemes } from "../graphemes.js";

interface Cell {
  text: string;
  width: number;
  /** Index in the editor text where this cell starts. */
  at: number;
  marker?: boolean;
}

/**
 * The prompt as lines of the input box: `> ` before the first line, the
 * cursor as an inverted cell (the hardware cursor stays hidden), collapsed
 * pastes as one `[pasted N lines]` marker. An empty prompt shows `hint`.
 */
export function inputLines(editor: Editor, width: number, theme: Theme, focused: boolean, hint: string): string[] {
  return promptView(editor, width, theme, focused, hint).lines;
}

/** The prompt's lines and the row the cursor is on (the box shows the rows around it). */
export function promptView(editor: Editor, width: number, theme: Theme, focused: boolean, hint: string): { lines: string[]; cursorRow: number } {
  const room = Math.max(1, width - 3); // one cell kept for the cursor at the end of a full row
  const search = editor.search;
  if (search) {
    // The search line on top, as bash's `(reverse-i-search)` prompt; the match below it.
    const view = promptView(Object.assign(Object.create(editor) as Editor, { search: undefined }), width, theme, false, "");
    const head = `${paint(theme, "accent", search.failed ? "failing search:" : "search:")} ${sanitize(search.query)}${focused ? `${open(theme.tokens.selection) || "\x1b[7m"} \x1b[0m` : ""}`;
    return { lines: [head, ...(editor.isEmpty() ? [] : view.lines)], cursorRow: 0 };
  }
  const cursorOn = (text: string) => `${open(theme.tokens.selection) || "\x1b[7m"}${text}\x1b[0m`;
  if (editor.isEmpty()) {
    const first = focused ? cursorOn(" ") : " ";
    return { lines: [`${paint(theme, "accent", ">")} ${first}${paint(theme, "dim", sanitize(hint).slice(0, Math.max(0, room - 1)))}`], cursorRow: 0 };
  }
  const rows: Cell[][] = [[]];
  let rowWidth = 0;
  // One cell per grapheme cluster, so the cursor covers a whole flag, skin-toned emoji or accented letter.
  const chars = graphemes(editor.text).map((g) => g.segment);
  let at = 0;
  const push = (cell: Cell) => {
    if (rowWidth + cell.width > room && rowWidth > 0) {
      rows.push([]);
      rowWidth = 0;
    }
    rows[rows.length - 1]!.push(cell);
    rowWidth += cell.width;
  };
  for (const ch of chars) {
    const paste = editor.pasteOf(ch);
    if (ch === "\n") {
      rows[rows.length - 1]!.push({ text: "", width: 0, at });
      rows.push([]);
      rowWidth = 0;
    } else if (paste !== undefined) {
      const label = `[pasted ${lineCount(paste)} lines]`;
      push({ text: label, width: label.length, at, marker: true });
    } else {
      const safe = sanitize(ch) || "?";
      push({ text: safe, width: textWidth(safe), at });
    }
    at += ch.length;
  }
  let cursorRow = rows.length - 1;
  rows.forEach((row, r) => {
    if (row.some((cell) => cell.at === editor.cursor)) cursorRow = r;
  });
  const lines = rows.map((row, r) => {
    let line = r === 0 ? `${paint(theme, "accent", ">")} ` : "  ";
    for (const cell of row) {
      let text = cell.marker ? paint(theme, "accent", cell.text) : cell.text;
      if (focused && cell.at === editor.cursor) text = cursorOn(cell.text || " ");
      line += text;
    }
    if (focused && r === rows.length - 1 && editor.cursor === editor.text.length) line += cursorOn(" ");
    return line;
  });
  return { lines, cursorRow };
}
