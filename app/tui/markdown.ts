import type { Theme, TokenName } from "../../themes/index.js";
import { open } from "./style.js";
import { dropColors, onlySgr, sanitize, wrap, wrapLine } from "./text.js";

/*
 * Markdown to styled lines with marked + marked-terminal. Both are loaded on
 * demand (marked-terminal alone costs ~120 ms to import, STACK.md): until
 * `loadMarkdown()` has resolved, text renders as plain wrapped lines.
 */

type Parse = (markdown: string) => string;
type Factory = (theme: Theme, width: number) => Parse;

let factory: Factory | undefined;
const parsers = new Map<string, Parse>();

/** Loads marked, marked-terminal and the code highlighter; safe to call more than once. */
export async function loadMarkdown(): Promise<void> {
  if (factory) return;
  // cli-highlight is marked-terminal's own highlighter (its dependency): asked first whether it knows a fence's
  // language, because for an unknown one highlight.js writes a warning to the terminal behind the screen.
  const [{ Marked }, { markedTerminal }, chalk, { supportsLanguage }] = await Promise.all([
    import("marked"), import("marked-terminal"), import("chalk"), import("cli-highlight"),
  ]);
  // marked-terminal skips highlighting when chalk finds no colour terminal (tests, pipes);
  // colour is decided by the theme here, so chalk's own guess must not switch it off.
  chalk.default.level = 3;
  factory = (theme, width) => {
    const style = (token: TokenName, extra = "") => (text: string) => {
      const seq = open(theme.tokens[token]) + extra;
      return seq ? `${seq}${text}\x1b[0m` : text;
    };
    const plain = (text: string) => text;
    const code = style("code");
    const marked = new Marked();
    marked.use(
      markedTerminal(
        {
          code, codespan: code, blockquote: style("dim"), html: style("dim"), heading: style("heading"),
          firstHeading: style("heading"), hr: style("dim"), listitem: plain, table: plain, paragraph: plain,
          strong: (t) => `\x1b[1m${t}\x1b[22m`, em: (t) => `\x1b[4m${t}\x1b[24m`, del: style("dim"),
          link: style("link"), href: style("link"), text: plain,
          unescape: true, emoji: false, width, showSectionPrefix: false, reflowText: false, tab: 2,
          tableOptions: { style: { head: [], border: [] } },
        },
        { theme: highlightTheme(theme), ignoreIllegals: true },
      ),
      {
        walkTokens(token) {
          if (token.type === "code" && token.lang && !supportsLanguage(token.lang)) token.lang = undefined;
        },
        renderer: {
          // Always "text (url)": an OSC 8 hyperlink would be stripped before blessed and lose the url.
          link(token) {
            const text = this.parser.parseInline(token.tokens);
            const link = style("link");
            return text && text !== token.href ? `${text} (${link(token.href)})` : link(token.href);
          },
          // Text inside tight list items keeps its inline markup (marked-terminal prints it raw).
          text(token) {
            return "tokens" in token && token.tokens ? this.parser.parseInline(token.tokens) : false;
          },
          hr: () => `${style("dim")("─".repeat(Math.max(1, width)))}\n\n`,
        },
      },
    );
    return (markdown) => marked.parse(markdown, { async: false });
  };
}

function highlightTheme(theme: Theme): Record<string, (text: string) => string> {
  const by = (token: TokenName) => (text: string) => {
    const seq = open(theme.tokens[token]);
    return seq ? `${seq}${text}\x1b[0m` : text;
  };
  return {
    keyword: by("accent"), built_in: by("tool"), type: by("tool"), literal: by("warning"), number: by("warning"),
    string: by("success"), regexp: by("success"), comment: by("dim"), doctag: by("dim"), meta: by("dim"),
    title: by("heading"), function: by("heading"), class: by("heading"), attr: by("user"), "template-variable": by("user"),
    addition: by("diffAdd"), deletion: by("diffDel"), default: (t) => t,
  };
}

/** True once the markdown libraries are loaded (views render plain text before). */
export function markdownLoaded(): boolean {
  return factory !== undefined;
}

/**
 * Markdown from the model as styled lines of at most `width` cells. The text
 * is sanitized first; only SGR codes survive the libraries' output; with a
 * NO_COLOR theme the colours are dropped. Never throws: a parser failure
 * falls back to the plain text.
 */
export function renderMarkdown(markdown: string, width: number, theme: Theme): string[] {
  const text = sanitize(markdown);
  if (!factory) return wrap(text, width);
  const key = `${theme.name}:${theme.mono}:${width}`;
  let parse = parsers.get(key);
  if (!parse) {
    if (parsers.size > 32) parsers.clear();
    parse = factory(theme, width);
    parsers.set(key, parse);
  }
  let out: string;
  try {
    out = onlySgr(parse(text));
  } catch {
    return wrap(text, width);
  }
  if (theme.mono) out = dropColors(out);
  const lines = out.replace(/\s+$/, "").split("\n");
  while (lines.length && lines[0]!.replace(/\x1b\[[0-9;]*m/g, "").trim() === "") lines.shift();
  return lines.flatMap((line) => wrapLine(line, width, hangOf(line)));
}

/** Indent of a list item's text (after its bullet) or of an indented line. */
function hangOf(line: string): number {
  const plain = line.replace(/\x1b\[[0-9;]*m/g, "");
  const m = /^(\s*)(?:[*+-]|\d+\.)\s+/.exec(plain) ?? /^(\s+)/.exec(plain);
  return m ? m[0].length : 0;
}
