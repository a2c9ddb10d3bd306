import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";

/**
 * HTML to readable markdown for web_fetch, in a side bundle of its own (scripts/build.mjs):
 * the three libraries are ~400 KB that only a fetched HTML page needs, so neither a start
 * nor the snapshot holds them.
 *
 * linkedom builds the DOM (small and fast; a page needs no layout or scripts, so jsdom's
 * weight buys nothing), Mozilla's Readability (Firefox's reader view) keeps the article and
 * drops navigation, ads and footers, and turndown writes the markdown.
 */
export interface PageText {
  title?: string;
  markdown: string;
}

/** Elements that are never text a reader wants. */
const NOISE = "script, style, noscript, template, iframe, svg, canvas, form, button, select, input, textarea";

export function htmlToMarkdown(html: string, pageUrl: string): PageText {
  const { document } = parseHTML(html);
  absolutize(document, pageUrl);
  const fallbackTitle = document.querySelector("title")?.textContent?.trim() || undefined;
  // Readability changes the document it reads: it gets its own copy, and the page's body stays as it was for the fallback.
  const copy = parseHTML(document.toString()).document;
  let article: { title?: string | null; content?: string | null } | null = null;
  try {
    article = new Readability(copy as unknown as Document, { charThreshold: 200 }).parse();
  } catch {
    article = null;
  }
  const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", emDelimiter: "*" });
  turndown.remove(["script", "style", "noscript", "template", "iframe"] as never);
  let markdown = "";
  if (article?.content) {
    markdown = turndown.turndown(parseHTML(`<html><body>${article.content}</body></html>`).document.body as unknown as HTMLElement);
  }
  // No article found (a listing, an index page, a tiny page): the whole body, less what is never text.
  if (!markdown.trim()) {
    for (const node of [...document.querySelectorAll(NOISE)]) node.remove();
    const body = document.body ?? document.documentElement;
    markdown = body ? turndown.turndown(body as unknown as HTMLElement) : "";
  }
  const title = article?.title?.trim() || fallbackTitle;
  return { ...(title ? { title } : {}), markdown: markdown.replace(/\n{3,}/g, "\n\n").trim() };
}

/** Links and images as absolute URLs (from the page's URL, or its `<base href>`), so the model can fetch them. */
function absolutize(document: ReturnType<typeof parseHTML>["document"], pageUrl: string): void {
  let base = pageUrl;
  const href = document.querySelector("base[href]")?.getAttribute("href");
  if (href) base = resolveUrl(href, pageUrl) ?? pageUrl;
  for (const [selector, attribute] of [["a[href]", "href"], ["img[src]", "src"]] as const) {
    for (const element of [...document.querySelectorAll(selector)]) {
      const value = element.getAttribute(attribute);
      const absolute = value && resolveUrl(value, base);
      if (absolute) element.setAttribute(attribute, absolute);
    }
  }
}

function resolveUrl(value: string, base: string): string | undefined {
  try {
    return new URL(value, base).href;
  } catch {
    return undefined;
  }
}
