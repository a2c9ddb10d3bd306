import type { Color, Theme, TokenName, TokenStyle } from "../../themes/index.js";

/*
 * Views style text with SGR codes made from theme tokens; blessed turns SGR in
 * content into cell attributes (truecolor matched to the terminal's palette).
 */

const NAMED: Record<string, number> = {
  black: 0, red: 1, green: 2, yellow: 3, blue: 4, magenta: 5, cyan: 6, white: 7,
  brightblack: 8, gray: 8, grey: 8, brightred: 9, brightgreen: 10, brightyellow: 11, brightblue: 12,
  brightmagenta: 13, brightcyan: 14, brightwhite: 15,
};

function colorParams(color: Color, background: boolean): string | undefined {
  if (typeof color === "number") return `${background ? 48 : 38};5;${color}`;
  const hex = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color);
  if (hex) return `${background ? 48 : 38};2;${parseInt(hex[1]!, 16)};${parseInt(hex[2]!, 16)};${parseInt(hex[3]!, 16)}`;
  const n = NAMED[color.toLowerCase()];
  if (n === undefined) return undefined;
  const base = n < 8 ? (background ? 40 : 30) + n : (background ? 100 : 90) + n - 8;
  return String(base);
}

const openCache = new WeakMap<TokenStyle, string>();

/** The SGR sequence that turns a token's style on ("" for the plain style). */
export function open(style: TokenStyle): string {
  let seq = openCache.get(style);
  if (seq === undefined) {
    const params: string[] = [];
    if (style.bold) params.push("1");
    if (style.underline) params.push("4");
    if (style.inverse) params.push("7");
    const fg = style.fg === undefined ? undefined : colorParams(style.fg, false);
    const bg = style.bg === undefined ? undefined : colorParams(style.bg, true);
    if (fg) params.push(fg);
    if (bg) params.push(bg);
    seq = params.length ? `\x1b[${params.join(";")}m` : "";
    openCache.set(style, seq);
  }
  return seq;
}

/** Text drawn in a token's style; the text must already be sanitized. */
export function paint(theme: Theme, token: TokenName, text: string): string {
  const seq = open(theme.tokens[token]);
  return seq && text ? `${seq}${text}\x1b[0m` : text;
}

/** A painter bound to a theme, for views that paint a lot. */
export type Painter = (token: TokenName, text: string) => string;
export function painter(theme: Theme): Painter {
  return (token, text) => paint(theme, token, text);
}
