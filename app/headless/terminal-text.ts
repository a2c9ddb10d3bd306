// Text that came from outside (a prompt, the model, a tool) and is written for a
// person to read on a terminal must not drive the terminal: an OSC sequence can
// retitle it or write the clipboard (OSC 52), a CSI sequence can move the cursor
// and overwrite what Keen printed, a lone CR can hide a line, bidi overrides can
// make text read differently from what it is. Every such character is made
// visible instead, so the escape sequence it started is inert text:
//   C0 controls except \n and \t, and DEL  -> their Unicode control pictures (ESC -> ␛, BEL -> ␇)
//   a CR directly before \n is kept (CRLF line ends are harmless)
//   C1 controls (U+0080-U+009F: 8-bit CSI, OSC, ...) -> <U+009B>
//   bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) -> <U+202E>
// JSON outputs keep the exact text (JSON escapes it); see README "Security".

const UNSAFE = /\r(?!\n)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with escape sequences and control characters made visible (see the rule above). */
export function terminalText(text: string): string {
  UNSAFE.lastIndex = 0;
  if (!UNSAFE.test(text)) return text;
  return text.replace(UNSAFE, visible);
}

function visible(char: string): string {
  const code = char.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return "\u2421";
  return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
}
