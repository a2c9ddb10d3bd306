import { readFileSync } from "node:fs";
import { dark } from "./dark.js";
import { highContrast } from "./high-contrast.js";
import { light } from "./light.js";
import { TOKEN_NAMES, type Theme, type TokenName, type TokenStyle } from "./tokens.js";

export type { Color, Theme, TokenName, TokenStyle } from "./tokens.js";

/** Built-in themes by name; `/theme` cycles through them in this order. */
export const THEMES: Record<string, Theme> = { dark, light, "high-contrast": highContrast };
export const THEME_NAMES = Object.keys(THEMES);

/** A theme that could not be loaded; the message names the file or the known names. */
export class ThemeError extends Error {
  override name = "ThemeError";
}

/**
 * The theme to use: a built-in name, or a JSON file (`{ "base": "dark",
 * "tokens": { "error": { "fg": "#ff0000" } } }`) whose tokens override its
 * base. With NO_COLOR set (any non-empty value, see no-color.org) every
 * colour is dropped and bold, underline and inverse carry the meaning.
 */
export function loadTheme(nameOrPath: string | undefined, env: NodeJS.ProcessEnv = process.env): Theme {
  const theme = resolve(nameOrPath ?? "dark");
  return env.NO_COLOR ? monochrome(theme) : theme;
}

function resolve(nameOrPath: string): Theme {
  const builtin = THEMES[nameOrPath];
  if (builtin) return builtin;
  if (!/[/\\]|\.json$/.test(nameOrPath)) {
    throw new ThemeError(`unknown theme "${nameOrPath}"; built-in themes: ${THEME_NAMES.join(", ")}, or a path to a .json theme file`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(nameOrPath, "utf8"));
  } catch (error) {
    throw new ThemeError(`cannot read theme file ${nameOrPath}: ${(error as Error).message}`);
  }
  return fromJson(nameOrPath, parsed);
}

function fromJson(path: string, value: unknown): Theme {
  const file = (value ?? {}) as { name?: unknown; base?: unknown; tokens?: unknown };
  const base = THEMES[typeof file.base === "string" ? file.base : "dark"];
  if (!base) throw new ThemeError(`${path}: base must be one of ${THEME_NAMES.join(", ")}`);
  const tokens = { ...base.tokens };
  for (const [key, style] of Object.entries((file.tokens ?? {}) as Record<string, unknown>)) {
    if (!(TOKEN_NAMES as readonly string[]).includes(key)) {
      throw new ThemeError(`${path}: unknown token "${key}"; tokens: ${TOKEN_NAMES.join(", ")}`);
    }
    tokens[key as TokenName] = checkStyle(path, key, style);
  }
  return { name: typeof file.name === "string" ? file.name : path, mono: false, tokens };
}

function checkStyle(path: string, key: string, style: unknown): TokenStyle {
  if (!style || typeof style !== "object") throw new ThemeError(`${path}: token "${key}" must be an object`);
  const s = style as Record<string, unknown>;
  for (const c of ["fg", "bg"] as const) {
    const v = s[c];
    if (v !== undefined && typeof v !== "string" && typeof v !== "number") {
      throw new ThemeError(`${path}: ${key}.${c} must be "#rrggbb", a colour name or a 256-colour index`);
    }
  }
  return s as TokenStyle;
}

/** The same theme without colour: only bold, underline and inverse survive, plus a few that need one. */
export function monochrome(theme: Theme): Theme {
  const tokens = {} as Record<TokenName, TokenStyle>;
  for (const name of TOKEN_NAMES) {
    const { bold, underline, inverse } = theme.tokens[name];
    tokens[name] = { ...(bold && { bold }), ...(underline && { underline }), ...(inverse && { inverse }) };
  }
  Object.assign(tokens, {
    status: { inverse: true }, statusAccent: { inverse: true, bold: true }, selection: { inverse: true },
    risky: { inverse: true, bold: true }, error: { bold: true }, borderFocus: { bold: true }, heading: { bold: true, underline: true },
  });
  return { name: theme.name, mono: true, tokens };
}
