import * as z from "zod";
import { version } from "../cli/version.js";
import { REDACTED } from "../permissions/redact.js";
import { defineTool, fail, strArg, toolInput } from "./define.js";
import type { Tool, ToolContext, ToolResult } from "./tool.js";

const WebFetchInput = toolInput("web_fetch", () => z.object({
  url: z.string().trim().min(1).describe("The http(s) URL to fetch"),
  offset: z.number().int().min(0).optional().describe("Start at this character of the page's text (to read on where a result was cut)"),
}));

/** web_fetch's limits; the defaults are what a session gets (tests pass smaller ones). */
export interface WebFetchLimits {
  /** Characters of text one result carries (the rest by `offset`, from the cache). */
  maxChars: number;
  /** Bytes read from one response body at most. */
  maxBytes: number;
  /** Milliseconds for the whole fetch, redirects and body included (`web.timeoutMs`). */
  timeoutMs: number;
  /** Pages the per-session cache keeps (the oldest goes first). */
  cacheEntries: number;
}
export const WEB_FETCH_DEFAULTS: WebFetchLimits = { maxChars: 50_000, maxBytes: 5 * 1024 * 1024, timeoutMs: 30_000, cacheEntries: 32 };

/** A fetched URL's answer, as the cache keeps it: its whole (redacted) text, cut per call. */
interface Page {
  head: string;
  text: string;
  is_error: boolean;
  details: Record<string, unknown>;
}

/**
 * `web_fetch`: GETs a URL and returns its text, a web page as readable markdown
 * (app/tools/web/html.ts). A network tool (`kind: "network"`, `mutates: false`): the call
 * itself is never asked about; the host is (through `call.askHost`, a `web:<host>` rule) unless
 * the config's lists allow it — the permission gate asks in ask and accept-edits, lets it in
 * auto and refuses it in read-only (docs/security.md, "web_fetch"). Loopback, private and
 * link-local addresses are refused unless the allow list names the host, checked where the
 * socket connects (app/tools/web/hosts.ts). One session's fetches are cached by URL, so a
 * second call for the same URL (or the rest of a cut page) sends no request.
 */
export function createWebFetchTool(ctx: ToolContext, limits: WebFetchLimits = { ...WEB_FETCH_DEFAULTS, ...timeoutOf(ctx) }): Tool {
  const cache = new Map<string, Page>();
  const lists = { allowed: ctx.web?.allowedDomains ?? [], denied: ctx.web?.deniedDomains ?? [] };
  return defineTool(
    "web_fetch",
    "Fetch a web page or text file by http(s) URL and return it as readable markdown (HTML is reduced to its main content; " +
      `JSON and other text comes back as it is). A result carries at most ${grouped(limits.maxChars)} characters: ` +
      "when one is cut, call again with `offset` for the rest (served from this session's cache, no new request). " +
      "Redirects to another host are reported, not followed. Addresses on the local network are refused.",
    WebFetchInput,
    async ({ url: given, offset = 0 }, call) => {
      const url = parseUrl(given);
      if (!url) return fail(`"${given}" is not a URL web_fetch can fetch: give an http:// or https:// URL`);
      url.hash = "";
      // A URL carrying a known secret would hand it to the host (a prompt injection's way out).
      if (ctx.redactor?.active && ctx.redactor.redact(url.href) !== url.href) {
        return fail("Not fetched: the URL contains one of the user's secrets (an API key or token from the environment).");
      }
      const hosts = await import("./web/hosts.js");
      const fetching = await import("./web/fetch-page.js");
      const refusal = fetching.urlRefusal(url, lists);
      if (refusal) return fail(`Not fetched: ${refusal}.`);
      let page = cache.get(url.href);
      if (page) {
        cache.delete(url.href);
        cache.set(url.href, page);
        return cut(page, offset, limits.maxChars, true);
      }
      try {
        await fetching.preflight(url, lists);
      } catch (error) {
        return fail(`Not fetched: ${error instanceof Error ? error.message : String(error)}.`);
      }
      if (!hosts.listStanding(lists, url).allowed) {
        const host = hosts.hostOf(url);
        const decision = call.askHost
          ? await call.askHost(host, hosts.portOf(url), { url: url.href })
          : { allow: false as const, reason: `${host} is not in web.allowedDomains of the user's Keen config, and there is nobody to ask` };
        if (!decision.allow) return fail(`Not fetched: ${decision.reason}`);
      }
      let fetched: Fetched;
      try {
        fetched = await fetching.fetchPage(url, {
          lists, env: ctx.env, timeoutMs: limits.timeoutMs, maxBytes: limits.maxBytes, signal: call.signal, userAgent: `Keen/${version} (web_fetch)`,
        });
      } catch (error) {
        if (call.signal.aborted) throw error;
        return fail(`Not fetched: ${error instanceof Error ? error.message : String(error)}.`, { url: url.href });
      }
      page = await toPage(url, fetched, limits.maxBytes, ctx.redactor);
      // Redacted whole, before any cut, so a cut never leaves part of a secret showing.
      if (ctx.redactor?.active) page = { ...page, text: ctx.redactor.redact(page.text), head: ctx.redactor.redact(page.head) };
      cache.set(url.href, page);
      while (cache.size > limits.cacheEntries) cache.delete(cache.keys().next().value!);
      return cut(page, offset, limits.maxChars, false);
    },
    {
      kind: "network",
      mutates: false,
      describe: (args) => ({ title: `Fetch ${strArg(args, "url") ?? ""}`.trim(), locations: [] }),
    },
  );
}

function timeoutOf(ctx: ToolContext): Partial<WebFetchLimits> {
  return ctx.web?.timeoutMs ? { timeoutMs: ctx.web.timeoutMs } : {};
}

/** The model's URL; a bare `example.com/x` is taken as https. */
function parseUrl(given: string): URL | undefined {
  const text = /^[a-z][a-z0-9+.-]*:/i.test(given) && !/^[^:/]+:\d/.test(given) ? given : `https://${given}`;
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

type Fetched = Awaited<ReturnType<typeof import("./web/fetch-page.js").fetchPage>>;

async function toPage(requested: URL, fetched: Fetched, maxBytes: number, redactor: ToolContext["redactor"]): Promise<Page> {
  const details: Record<string, unknown> = { url: requested.href, final_url: fetched.url, status: fetched.status };
  if (fetched.redirectedTo) {
    return {
      head: "", is_error: false, details: { ...details, redirect: fetched.redirectedTo },
      text: `${requested.href} redirects (HTTP ${fetched.status}) to ${fetched.redirectedTo}, on another host. ` +
        "web_fetch follows redirects within a host only: fetch that URL to follow it.",
    };
  }
  const { bodyKind, decodeBody, essence } = await import("./web/body.js");
  const kind = bodyKind(fetched.contentType, fetched.body);
  const type = essence(fetched.contentType) || "no content type";
  Object.assign(details, { content_type: type, bytes: fetched.body.length, ...(fetched.truncated ? { truncated_bytes: true } : {}) });
  if (kind === "binary") {
    return {
      head: "", is_error: true, details,
      text: `Not returned: ${fetched.url} is ${type} (${fetched.truncated ? "over " : ""}${grouped(fetched.body.length)} bytes), ` +
        "not text. web_fetch returns web pages and text only.",
    };
  }
  let text = decodeBody(fetched.body, fetched.contentType, kind);
  // Before the conversion too: markdown escapes (`ghp\_…`) would hide a secret from the redaction after it.
  if (redactor?.active) text = redactor.redact(text);
  let title: string | undefined;
  if (kind === "html") {
    const { htmlToMarkdown } = await import("./web/html.js");
    const converted = htmlToMarkdown(text, fetched.url);
    // The redaction mark as it was written, not as markdown escapes it (`\[redacted\]`).
    text = converted.markdown.replaceAll(`\\[${REDACTED.slice(1, -1)}\\]`, REDACTED);
    title = converted.title;
  }
  const failed = fetched.status >= 400;
  const lines = [
    ...(failed ? [`HTTP ${fetched.status}: the server answered with an error.`] : []),
    `URL: ${fetched.url}`,
    ...(title ? [`Title: ${title}`] : []),
    `Content-Type: ${type}${kind === "html" ? " (converted to markdown)" : ""}`,
    ...(fetched.truncated ? [`Note: the body is larger than ${(maxBytes / 1024 / 1024).toFixed(0)} MiB; only its first ${(maxBytes / 1024 / 1024).toFixed(0)} MiB was read.`] : []),
  ];
  return { head: lines.join("\n") + "\n\n", text, is_error: failed, details };
}

/** The page's text from `offset`, at most `max` characters, with a note saying what was cut and how to read on. */
function cut(page: Page, offset: number, max: number, cached: boolean): ToolResult {
  const details = { ...page.details, ...(cached ? { cached: true } : {}) };
  const total = page.text.length;
  if (offset > 0 && offset >= total) {
    return { content: `${page.head}Nothing at offset ${offset}: the text has ${grouped(total)} characters.`, is_error: true, details };
  }
  let end = Math.min(total, offset + max);
  // Never half of a surrogate pair.
  if (end < total && /[\uD800-\uDBFF]/.test(page.text[end - 1] ?? "")) end--;
  const part = page.text.slice(offset, end);
  const shown = offset > 0 || end < total;
  const note = shown
    ? `\n\n[Cut: characters ${grouped(offset)}-${grouped(end)} of ${grouped(total)} shown.` +
      (end < total ? ` For more, call web_fetch again with offset: ${end}.]` : "]")
    : "";
  return { content: page.head + part + note, is_error: page.is_error, details: shown ? { ...details, chars: total, offset, end } : details };
}

/**
 * 12345 as "12,345". Not toLocaleString: its first call loads ICU's number formatting (~15 ms of
 * CPU), and the tool's description, built at every start, would pay it before the first request.
 */
function grouped(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
