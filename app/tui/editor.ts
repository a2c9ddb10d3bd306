/*
 * The prompt being typed: text, cursor, collapsed pastes and history. Pure
 * (no terminal); the input box draws it with views/input.ts.
 */
import { graphemes } from "./graphemes.js";

/** Pastes longer than this many lines show as one `[pasted N lines]` marker and are sent in full. */
export const PASTE_COLLAPSE_LINES = 10;
const MARKER_BASE = 0xe000; // private-use code points stand in for collapsed pastes

/** Lines of a paste as a user counts them: a trailing newline ends the last line, it opens none. */
export function lineCount(text: string): number {
  return text.replace(/\n$/, "").split("\n").length;
}

/** Start offsets of the grapheme clusters of `text` (a flag, a skin-toned or ZWJ emoji, e + combining accent are one each). */
function clusterStarts(text: string): number[] {
  return graphemes(text).map((s) => s.index);
}

/** A prompt of the history: what was sent, and in this session how it looked (pastes folded). */
interface Entry {
  value: string;
  text?: string;
  pastes?: Map<string, string>;
}

/** Ctrl-R: the query, the entry it found (-1: none yet) and what was in the input before. */
interface Search {
  query: string;
  match: number;
  failed: boolean;
  saved: { text: string; cursor: number; pastes: Map<string, string> };
}

/** A multi-line prompt editor with history. */
export class Editor {
  text = "";
  cursor = 0;
  private pastes = new Map<string, string>();
  private nextPaste = 0;
  private history: Entry[];
  private historyIndex: number;
  private draft?: Entry;
  search?: Search;

  constructor(history: string[] = []) {
    this.history = history.map((value) => ({ value }));
    this.historyIndex = this.history.length;
  }

  /** The text collapsed pastes stand for, if `ch` is a marker. */
  pasteOf(ch: string): string | undefined {
    return this.pastes.get(ch);
  }

  insert(text: string): void {
    // Typed private-use characters would be mistaken for paste markers.
    const clean = text.replace(/[\ue000-\uf8ff]/g, "");
    this.text = this.text.slice(0, this.cursor) + clean + this.text.slice(this.cursor);
    this.cursor += clean.length;
  }

  /** A paste: inserted whole; a long one as a single marker. */
  paste(text: string): void {
    if (lineCount(text) <= PASTE_COLLAPSE_LINES) return this.insert(text);
    const marker = String.fromCharCode(MARKER_BASE + (this.nextPaste++ % 6400));
    this.pastes.set(marker, text);
    this.text = this.text.slice(0, this.cursor) + marker + this.text.slice(this.cursor);
    this.cursor += 1;
  }

  /** The prompt as sent: markers expanded to their pasted text. */
  value(): string {
    return [...this.text].map((ch) => this.pastes.get(ch) ?? ch).join("");
  }

  isEmpty(): boolean {
    return this.text.length === 0;
  }

  /** Empties the editor after sending and records the prompt in history. */
  take(): string {
    const value = this.value();
    if (value.trim() && this.history[this.history.length - 1]?.value !== value) this.history.push(this.snapshot());
    this.setText("");
    this.historyIndex = this.history.length;
    this.draft = undefined;
    this.search = undefined;
    return value;
  }

  setText(text: string): void {
    this.text = text;
    this.cursor = text.length;
    this.pastes.clear();
  }

  backspace(): void {
    if (this.cursor === 0) return;
    this.removeRange(this.clusterBefore(), this.cursor);
  }

  delete(): void {
    if (this.cursor >= this.text.length) return;
    this.removeRange(this.cursor, this.clusterAfter());
  }

  left(): void {
    if (this.cursor > 0) this.cursor = this.clusterBefore();
  }

  right(): void {
    if (this.cursor < this.text.length) this.cursor = this.clusterAfter();
  }

  /** Start of the grapheme cluster that ends at the cursor (the cursor never rests inside one). */
  private clusterBefore(): number {
    const lineStart = this.text.lastIndexOf("\n", this.cursor - 1) + 1;
    const starts = clusterStarts(this.text.slice(lineStart, this.cursor));
    return lineStart + (starts.at(-1) ?? 0);
  }

  private clusterAfter(): number {
    const end = this.text.indexOf("\n", this.cursor + 1);
    const rest = this.text.slice(this.cursor, end < 0 ? this.text.length : end + 1);
    const starts = clusterStarts(rest);
    return this.cursor + (starts[1] ?? rest.length);
  }

  lineStart(): void {
    this.cursor = this.text.lastIndexOf("\n", this.cursor - 1) + 1;
  }

  lineEnd(): void {
    const end = this.text.indexOf("\n", this.cursor);
    this.cursor = end < 0 ? this.text.length : end;
  }

  wordLeft(): void {
    const before = this.text.slice(0, this.cursor);
    const m = /\S+\s*$/.exec(before);
    this.cursor = m ? m.index : 0;
  }

  wordRight(): void {
    const m = /^\s*\S+/.exec(this.text.slice(this.cursor));
    this.cursor += m ? m[0].length : this.text.length - this.cursor;
  }

  deleteWordBack(): void {
    const end = this.cursor;
    this.wordLeft();
    this.removeRange(this.cursor, end);
  }

  killToLineStart(): void {
    const end = this.cursor;
    this.lineStart();
    this.removeRange(this.cursor, end);
  }

  killToLineEnd(): void {
    const start = this.cursor;
    this.lineEnd();
    const end = this.cursor === start && this.cursor < this.text.length ? start + 1 : this.cursor;
    this.cursor = start;
    this.removeRange(start, end);
  }

  /** Up: the line above, or on the first line the previous prompt of the history. */
  up(): void {
    const lineStart = this.text.lastIndexOf("\n", this.cursor - 1) + 1;
    if (lineStart > 0) return this.moveVertical(-1);
    if (this.historyIndex === 0) return;
    if (this.historyIndex === this.history.length) this.draft = this.snapshot();
    this.historyIndex--;
    this.recall(this.history[this.historyIndex]!);
  }

  /** Down: the line below, or on the last line the next prompt of the history (then the draft). */
  down(): void {
    if (this.text.indexOf("\n", this.cursor) >= 0) return this.moveVertical(1);
    if (this.historyIndex >= this.history.length) return;
    this.historyIndex++;
    this.recall(this.historyIndex === this.history.length ? (this.draft ?? { value: "" }) : this.history[this.historyIndex]!);
  }

  /** The input as an entry: sent value, and the folded text with its pastes. */
  private snapshot(): Entry {
    return { value: this.value(), text: this.text, pastes: new Map(this.pastes) };
  }

  /**
   * An entry back in the input, whole: its pastes folded as they were typed;
   * a long entry from an earlier session (stored as plain text) folds as one paste.
   */
  private recall(entry: Entry): void {
    this.setText("");
    if (entry.text !== undefined && entry.pastes) {
      for (const ch of entry.text) {
        const paste = entry.pastes.get(ch);
        if (paste !== undefined) this.paste(paste);
        else this.insert(ch);
      }
    } else if (lineCount(entry.value) > PASTE_COLLAPSE_LINES) this.paste(entry.value);
    else this.insert(entry.value);
    this.cursor = this.text.length;
  }

  /** Ctrl-R: starts a reverse search, or (already searching) goes to the next older match. */
  searchHistory(): void {
    if (!this.search) {
      this.search = { query: "", match: -1, failed: false, saved: { text: this.text, cursor: this.cursor, pastes: new Map(this.pastes) } };
      return;
    }
    if (this.search.query) this.findMatch(this.search.match - 1);
  }

  /** Typing while searching narrows the search from the current match. */
  searchType(text: string): void {
    const s = this.search!;
    s.query += text;
    this.findMatch(s.match < 0 ? this.history.length - 1 : s.match);
  }

  searchBackspace(): void {
    const s = this.search!;
    const starts = clusterStarts(s.query);
    s.query = s.query.slice(0, starts.at(-1) ?? 0);
    if (!s.query) {
      s.match = -1;
      s.failed = false;
      return this.restore(s.saved);
    }
    this.findMatch(this.history.length - 1);
  }

  /** Ends the search keeping the match in the input (Enter, Right, any editing key). */
  acceptSearch(): void {
    if (this.search && this.search.match >= 0) this.historyIndex = this.search.match;
    this.search = undefined;
  }

  /** Esc / Ctrl-G: the input back as it was before Ctrl-R. */
  cancelSearch(): void {
    if (!this.search) return;
    this.restore(this.search.saved);
    this.search = undefined;
  }

  private findMatch(from: number): void {
    const s = this.search!;
    const needle = s.query.toLowerCase();
    for (let i = Math.min(from, this.history.length - 1); i >= 0; i--) {
      if (this.history[i]!.value.toLowerCase().includes(needle)) {
        s.match = i;
        s.failed = false;
        return this.recall(this.history[i]!);
      }
    }
    s.failed = true; // bash keeps the last match on screen and says so
  }

  private restore(saved: Search["saved"]): void {
    this.text = saved.text;
    this.cursor = saved.cursor;
    this.pastes = new Map(saved.pastes);
  }

  /** The word before the cursor when it starts with `prefix` (`@` paths, `/` commands), with its start. */
  wordAtCursor(): { word: string; start: number } {
    const before = this.text.slice(0, this.cursor);
    const m = /(\S*)$/.exec(before)!;
    return { word: m[1]!, start: this.cursor - m[1]!.length };
  }

  /** Replaces text from `start` to the cursor (a completion). */
  replaceBeforeCursor(start: number, text: string): void {
    this.text = this.text.slice(0, start) + text + this.text.slice(this.cursor);
    this.cursor = start + text.length;
  }

  private moveVertical(dir: -1 | 1): void {
    const lineStart = this.text.lastIndexOf("\n", this.cursor - 1) + 1;
    const column = this.cursor - lineStart;
    if (dir < 0) {
      const prevStart = this.text.lastIndexOf("\n", lineStart - 2) + 1;
      this.cursor = Math.min(prevStart + column, lineStart - 1);
    } else {
      const nextStart = this.text.indexOf("\n", this.cursor) + 1;
      const nextEnd = this.text.indexOf("\n", nextStart);
      this.cursor = Math.min(nextStart + column, nextEnd < 0 ? this.text.length : nextEnd);
    }
  }

  private removeRange(start: number, end: number): void {
    for (const ch of this.text.slice(start, end)) this.pastes.delete(ch);
    this.text = this.text.slice(0, start) + this.text.slice(end);
    this.cursor = start;
  }
}
