/*
 * Terminal input decoded by Keen itself, not by blessed: blessed reads
 * Alt-Enter as Esc + Enter (which would interrupt the turn), garbles CSI-u
 * keys and knows nothing of bracketed paste (mode 2004). Bytes in, key,
 * text, paste and mouse events out.
 */

/** One decoded input event. Key names: "enter", "C-j", "M-enter", "S-tab", "pageup", "a" with ctrl … */
export type InputEvent =
  | { type: "key"; name: string; ctrl: boolean; meta: boolean; shift: boolean }
  | { type: "text"; text: string }
  | { type: "paste"; text: string }
  | { type: "mouse"; action: "wheelup" | "wheeldown" | "press" | "release"; x: number; y: number }
  /** The terminal window gained or lost the focus (mode 1004: ESC [ I / ESC [ O). */
  | { type: "focus"; focused: boolean };

/** The canonical name used in the keymap: modifiers as C-, M-, S- prefixes. */
export function keyId(e: Extract<InputEvent, { type: "key" }>): string {
  return `${e.ctrl ? "C-" : ""}${e.meta ? "M-" : ""}${e.shift ? "S-" : ""}${e.name}`;
}

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";
/** How long a lone ESC waits for the rest of a sequence before it counts as the Esc key. */
export const ESC_WAIT_MS = 30;

const key = (name: string, mods: { ctrl?: boolean; meta?: boolean; shift?: boolean } = {}): InputEvent => ({
  type: "key", name, ctrl: !!mods.ctrl, meta: !!mods.meta, shift: !!mods.shift,
});

const TILDE: Record<string, string> = { "1": "home", "2": "insert", "3": "delete", "4": "end", "5": "pageup", "6": "pagedown", "7": "home", "8": "end" };
const LETTER: Record<string, string> = { A: "up", B: "down", C: "right", D: "left", H: "home", F: "end", Z: "tab" };

function mods(param: string | undefined): { ctrl: boolean; meta: boolean; shift: boolean } {
  const m = Math.max(0, Number(param ?? 1) - 1);
  return { shift: !!(m & 1), meta: !!(m & 2), ctrl: !!(m & 4) };
}

/** A CSI sequence (without ESC [) as an event, or undefined for ones Keen ignores. */
function csi(body: string): InputEvent | undefined {
  const final = body[body.length - 1]!;
  const params = body.slice(0, -1);
  if (params.startsWith("<") && (final === "M" || final === "m")) {
    const [b, x, y] = params.slice(1).split(";").map(Number) as [number, number, number];
    if (b === 64 || b === 65) return { type: "mouse", action: b === 64 ? "wheelup" : "wheeldown", x: x - 1, y: y - 1 };
    return { type: "mouse", action: final === "M" ? "press" : "release", x: x - 1, y: y - 1 };
  }
  const parts = params.split(";");
  if (final === "~") {
    if (parts[0] === "27" && parts[2]) return codepointKey(Number(parts[2]), mods(parts[1])); // xterm modifyOtherKeys
    const name = TILDE[parts[0]!];
    return name ? key(name, mods(parts[1])) : undefined;
  }
  if (final === "u") return codepointKey(Number(parts[0]), mods(parts[1])); // CSI u (kitty, foot, …)
  if (final === "Z") return key("tab", { shift: true });
  if ((final === "I" || final === "O") && !params) return { type: "focus", focused: final === "I" };
  const name = LETTER[final];
  return name ? key(name, mods(parts[1])) : undefined;
}

function codepointKey(cp: number, m: { ctrl: boolean; meta: boolean; shift: boolean }): InputEvent {
  if (cp === 13) return key("enter", m);
  if (cp === 9) return key("tab", m);
  if (cp === 27) return key("escape", m);
  if (cp === 127 || cp === 8) return key("backspace", m);
  const ch = String.fromCodePoint(cp);
  if (!m.ctrl && !m.meta) return { type: "text", text: m.shift ? ch.toUpperCase() : ch };
  return key(ch.toLowerCase(), m);
}

/** One control byte or printable run as an event. */
function single(ch: string, meta: boolean): InputEvent {
  const c = ch.charCodeAt(0);
  if (ch === "\r") return key("enter", { meta });
  if (ch === "\n") return meta ? key("enter", { meta }) : key("j", { ctrl: true });
  if (ch === "\t") return key("tab", { meta });
  if (c === 0x7f || c === 0x08) return key("backspace", { meta });
  if (c === 0) return key("space", { ctrl: true, meta });
  if (c < 0x20) return key(String.fromCharCode(c + 96), { ctrl: true, meta });
  return meta ? key(ch, { meta }) : { type: "text", text: ch };
}

/**
 * A stateful decoder: `push(chunk)` returns the events a chunk completes.
 * Contract: never throws; a paste, CSI or ESC split over chunks waits for
 * the rest (a lone trailing ESC is released by `flushEscape()` after
 * ESC_WAIT_MS). A chunk of several typed lines without paste brackets (a
 * terminal without mode 2004) counts as a paste, so it is never sent line by line.
 */
export class KeyDecoder {
  private pending = "";
  private paste: string | undefined;

  push(chunk: string): InputEvent[] {
    let data = this.pending + chunk;
    this.pending = "";
    const out: InputEvent[] = [];
    if (this.paste === undefined && !data.includes("\x1b") && /[\r\n]./.test(data) && data.length > 2) {
      return [{ type: "paste", text: data.replace(/\r\n?/g, "\n") }];
    }
    while (data.length) {
      if (this.paste !== undefined) {
        const end = data.indexOf(PASTE_END);
        if (end < 0) {
          // Keep a possible partial end marker for the next chunk.
          const keep = partialSuffix(data, PASTE_END);
          this.paste += data.slice(0, data.length - keep);
          this.pending = data.slice(data.length - keep);
          return out;
        }
        out.push({ type: "paste", text: (this.paste + data.slice(0, end)).replace(/\r\n?/g, "\n") });
        this.paste = undefined;
        data = data.slice(end + PASTE_END.length);
        continue;
      }
      if (data.startsWith(PASTE_START)) {
        this.paste = "";
        data = data.slice(PASTE_START.length);
        continue;
      }
      if (data[0] === "\x1b") {
        const consumed = this.escape(data, out);
        if (consumed === 0) {
          this.pending = data;
          return out;
        }
        data = data.slice(consumed);
        continue;
      }
      const cp = data.codePointAt(0)!;
      const ch = String.fromCodePoint(cp);
      const ev = single(ch, false);
      const last = out[out.length - 1];
      if (ev.type === "text" && last?.type === "text") last.text += ev.text;
      else out.push(ev);
      data = data.slice(ch.length);
    }
    return out;
  }

  /** Releases a lone ESC that no sequence followed. */
  flushEscape(): InputEvent[] {
    if (this.pending === "\x1b") {
      this.pending = "";
      return [key("escape")];
    }
    return [];
  }

  /** True while a lone ESC waits for the rest of its sequence. */
  get waiting(): boolean {
    return this.pending === "\x1b";
  }

  /** Decodes one escape sequence at the start of `data`; returns bytes consumed, 0 when incomplete. */
  private escape(data: string, out: InputEvent[]): number {
    if (data.length === 1) return 0;
    const second = data[1]!;
    if (second === "[") {
      if (PASTE_START.startsWith(data) && data.length < PASTE_START.length) return 0;
      const m = /^\x1b\[([<0-9;:?]*)([ -\/]*)([@-~])/.exec(data);
      if (!m) return data.length < 16 && /^\x1b\[[<0-9;:?]*$/.test(data) ? 0 : 2;
      const ev = csi(m[1]! + m[3]!);
      if (ev) out.push(ev);
      return m[0].length;
    }
    if (second === "O") {
      if (data.length < 3) return 0;
      const name = LETTER[data[2]!];
      if (name) out.push(key(name));
      return 3;
    }
    if (second === "\x1b") {
      out.push(key("escape"));
      return 1;
    }
    const cp = data.codePointAt(1)!;
    const ch = String.fromCodePoint(cp);
    out.push(single(ch, true));
    return 1 + ch.length;
  }
}

function partialSuffix(data: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, data.length); n > 0; n--) {
    if (data.endsWith(marker.slice(0, n))) return n;
  }
  return 0;
}
