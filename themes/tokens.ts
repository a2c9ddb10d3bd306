/**
 * A theme maps semantic tokens to styles; views ask for `theme.tokens.error`,
 * never for a colour, so a theme file is the one place a colour is chosen.
 */

/** A colour: `#rrggbb`, a 256-colour index, or one of the 16 ANSI names. */
export type Color = string | number;

/** How one token looks. Absent fields inherit the terminal's defaults. */
export interface TokenStyle {
  fg?: Color;
  bg?: Color;
  bold?: boolean;
  underline?: boolean;
  inverse?: boolean;
}

/** Every token a view may use. */
export const TOKEN_NAMES = [
  "text", "dim", "accent", "user", "assistant", "thinking", "tool", "success", "error", "warning",
  "diffAdd", "diffDel", "diffHunk", "diffMeta", "border", "borderFocus", "status", "statusAccent",
  "selection", "risky", "code", "heading", "link", "queued",
] as const;
export type TokenName = (typeof TOKEN_NAMES)[number];

/** A complete theme: a name and a style for every token. */
export interface Theme {
  name: string;
  /** True for the NO_COLOR theme: views add words where others rely on colour. */
  mono: boolean;
  tokens: Record<TokenName, TokenStyle>;
}
