/*
 * The prompt being typed: text, cursor, collapsed pastes and history. Pure
 * (no terminal); the input box draws it with views/input.ts.
 */

/** Pastes longer than this many lines show as one `[pasted N lines]` marker and are sent in full. */
export const PASTE_COLLAPSE_LINES = 10;
const MARKER_BASE = 0xe000; // private-use code points stand in for collapsed pastes

/** A multi-line prompt editor with history. */
export class Editor {
  text = "";
  cursor = 0;
  private pastes = new Map<string, string>();
  private nextPaste = 0;
  private history: string[];
  private historyIndex: number;
  private draft = "";

  constructor(history: string[] = []) {
    this.history = [...history];
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
    const lines = text.split("\n").length;
    if (lines <= PASTE_COLLAPSE_LINES) return this.insert(text);
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
    if (value.trim() && this.history[this.history.length - 1] !== value) this.history.push(value);
    this.setText("");
    this.historyIndex = this.history.length;
    this.draft = "";
    return value;
  }

  setText(text: string): void {
    this.text = text;
    this.cursor = text.length;
    this.pastes.clear();
  }

  backspace(): void {
    if (this.cursor === 0) return;
    const step = isLowSurrogate(this.text.charCodeAt(this.cursor - 1)) ? 2 : 1;
    this.removeRange(this.cursor - step, this.cursor);
  }

  delete(): void {
    if (this.cursor >= this.text.length) return;
    const step = isHighSurrogate(this.text.charCodeAt(this.cursor)) ? 2 : 1;
    this.removeRange(this.cursor, this.cursor + step);
  }

  left(): void {
    if (this.cursor > 0) this.cursor -= isLowSurrogate(this.text.charCodeAt(this.cursor - 1)) ? 2 : 1;
  }

  right(): void {
    if (this.cursor < this.text.length) this.cursor += isHighSurrogate(this.text.charCodeAt(this.cursor)) ? 2 : 1;
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
    if (this.historyIndex === this.history.length) this.draft = this.value();
    this.historyIndex--;
    this.setText(this.history[this.historyIndex]!);
  }

  /** Down: the line below, or on the last line the next prompt of the history (then the draft). */
  down(): void {
    if (this.text.indexOf("\n", this.cursor) >= 0) return this.moveVertical(1);
    if (this.historyIndex >= this.history.length) return;
    this.historyIndex++;
    this.setText(this.historyIndex === this.history.length ? this.draft : this.history[this.historyIndex]!);
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

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}
function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
