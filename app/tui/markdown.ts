import type { Theme, TokenName } from "../../themes/index.js";
import { open } from "./style.js";
import { dropColors, onlySgr, sanitize, SGR, textWidth, wrap, wrapLine } from "./text.js";

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
    let listDepth = 0;
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
          // marked-terminal numbers a list by rewriting its rendered text, so a nested bullet takes the
          // parent's next number and `start` is lost: each item is rendered here with its own marker.
          list(token) {
            const start = typeof token.start === "number" ? token.start : 1;
            const marks = token.items.map((_, i) => (token.ordered ? `${start + i}.` : "*"));
            const pad = Math.max(...marks.map((m) => m.length)) + 1;
            listDepth++;
            let items: string[];
            try {
              items = token.items.map((item, i) => {
                // Blocks one per line; a task's checkbox stays on its text's line.
                const text = item.tokens.map((t) => this.parser.parse([t]).replace(/\s+$/, "") + (t.type === "checkbox" ? " " : "\n")).join("");
                const lines = text.replace(/\s+$/, "").split("\n").filter((l) => l.replace(SGR, "").trim());
                return lines.map((l, n) => (n ? " ".repeat(pad) : marks[i]!.padEnd(pad)) + l).join("\n");
              });
            } finally {
              listDepth--;
            }
            const body = items.join(token.loose ? "\n\n" : "\n");
            return (listDepth ? body : body.replace(/^/gm, "  ")) + "\n\n";
          },
          // Own table: marked-terminal ignores a column's alignment (`---:`) and rules off every row.
          table(token) {
            const head = token.header.map((c) => this.parser.parseInline(c.tokens));
            const body = token.rows.map((r) => r.map((c) => this.parser.parseInline(c.tokens)));
            const widths = head.map((h, i) => Math.max(textWidth(h), ...body.map((r) => textWidth(r[i] ?? ""))));
            const cell = (text: string, i: number) => {
              const room = widths[i]! - textWidth(text);
              const align = token.align[i];
              const left = align === "right" ? room : align === "center" ? Math.floor(room / 2) : 0;
              return " ".repeat(left) + text + " ".repeat(room - left);
            };
            const row = (cells: string[], bold = false) =>
              `│ ${cells.map((c, i) => (bold ? `\x1b[1m${cell(c, i)}\x1b[22m` : cell(c, i))).join(" │ ")} │`;
            const rule = (l: string, m: string, r: string) => l + widths.map((w) => "─".repeat(w + 2)).join(m) + r;
            return [rule("┌", "┬", "┐"), row(head, true), rule("├", "┼", "┤"), ...body.map((r) => row(r)), rule("└", "┴", "┘")].join("\n") + "\n\n";
          },
          // A bar per level, so a quote inside a quote reads as one (marked-terminal only indents).
          blockquote(token) {
            const bar = style("dim")("│");
            const inner = this.parser.parse(token.tokens).replace(/\s+$/, "").replace(/^\n+/, "");
            return inner.split("\n").map((l) => (l.replace(SGR, "").trim() ? `${bar} ${l}` : bar)).join("\n") + "\n\n";
          },
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
  return lines.flatMap((line) => {
    const wrapped = wrapLine(line, width, hangOf(line));
    // A wrapped quote line keeps its bars on every row.
    const bars = QUOTE_BARS.exec(line)?.[0];
    if (!bars || wrapped.length < 2) return wrapped;
    const cells = bars.replace(SGR, "").length;
    return wrapped.map((l, i) => (i ? bars + l.slice(cells) : l));
  });
}

const QUOTE_BARS = /^(?:(?:\x1b\[[0-9;]*m)*│(?:\x1b\[[0-9;]*m)* )+/;

/** Indent of a list item's text (after its bullet) or of an indented line. */
function hangOf(line: string): number {
  const plain = line.replace(/\x1b\[[0-9;]*m/g, "");
  const m = /^(\s*(?:│ )*)(?:[*+-]|\d+\.)\s+/.exec(plain) ?? /^(\s*(?:│ )+|\s+)/.exec(plain);
  return m ? m[0].length : 0;
}
