import type { Theme } from "../../../themes/index.js";
import { markdownLoaded, renderMarkdown } from "../markdown.js";
import type { SessionView, ToolCall, TranscriptItem } from "../state.js";
import { paint } from "../style.js";
import { sanitize, truncate, wrap, wrapLine } from "../text.js";
import { planLines } from "./plan.js";
import { setupLines } from "./setup.js";
import { inlineLines } from "./tool-inline.js";
import { duration, statusMark, statusWord, callLabel } from "./tool-summary.js";
import { windowOf, type Scroll, type Window } from "./window.js";

/** What rendering a transcript needs besides the items. */
export interface TranscriptContext {
  theme: Theme;
  width: number;
  now: number;
  thinkingExpanded: boolean;
  /** Tool output and diffs shown whole under their calls (Ctrl-O), not folded. */
  outputExpanded?: boolean;
}

/** User prompts longer than this show their first lines and a count. */
const USER_PREVIEW_LINES = 12;

/**
 * Rendered lines per item, kept while the item object, the width and the
 * theme stay the same. The reducer replaces an item when it changes, so
 * only the message still streaming is rendered again.
 */
export class TranscriptCache {
  private cache = new WeakMap<object, { stamp: string; lines: string[] }>();
  /** Finished paragraphs of messages still streaming, rendered once each (by item id). */
  readonly streams = new Map<number, { stamp: string; chunks: { end: number; lines: string[] }[] }>();
  renders = 0;

  lines(key: object, stamp: string, render: () => string[]): string[] {
    const hit = this.cache.get(key);
    if (hit && hit.stamp === stamp) return hit.lines;
    this.renders++;
    const lines = render();
    this.cache.set(key, { stamp, lines });
    return lines;
  }
}

/** A partial answer a retry replaced: kept on screen, dim, and said to be discarded, with the retry's reason (an HTTP status, an overload, a cut connection). */
function discardedLines(text: string, reason: string, width: number, theme: Theme): string[] {
  return [...wrap(sanitize(text), width).map((l) => paint(theme, "dim", l)), ...wrap(`(discarded: ${sanitize(reason)}; the step is retried)`, width).map((l) => paint(theme, "queued", l))];
}

/** The lines of one transcript item; tool items are drawn from their call record. */
export function renderItem(item: TranscriptItem, prev: TranscriptItem | undefined, tool: ToolCall | undefined, ctx: TranscriptContext, cache?: TranscriptCache): string[] {
  const { theme, width } = ctx;
  const gap = prev === undefined || (item.type === "tool" && prev.type === "tool") ? [] : [""];
  switch (item.type) {
    case "user": {
      let lines = wrap(sanitize(item.text), width - 2);
      if (lines.length > USER_PREVIEW_LINES) {
        const hidden = lines.length - USER_PREVIEW_LINES + 1;
        lines = [...lines.slice(0, USER_PREVIEW_LINES - 1), paint(theme, "dim", `[${hidden} more lines]`)];
      }
      const out = lines.map((l, i) => (i === 0 ? paint(theme, "user", "> ") : "  ") + l);
      if (item.state === "failed") out.push(paint(theme, "queued", "  (not sent)"));
      return [...gap, ...out];
    }
    case "assistant":
      if (item.discarded) return [...gap, ...discardedLines(item.text, item.retryReason ?? "the step failed", width, theme)];
      return [...gap, ...(item.streaming && cache ? streamingMarkdown(item, ctx, cache) : renderMarkdown(item.text, width, theme))];
    case "thinking": {
      const text = sanitize(item.text).trim();
      const label = item.streaming ? "thinking…" : "thought";
      if (!ctx.thinkingExpanded) {
        const last = text.split("\n").filter(Boolean).pop() ?? "";
        const n = text.split("\n").length;
        const hint = item.streaming ? last : `${n} ${n === 1 ? "line" : "lines"}, Ctrl-T shows`;
        return [...gap, truncate(paint(theme, "thinking", `${label} · ${hint}`), width)];
      }
      return [...gap, paint(theme, "thinking", label), ...wrap(text, width - 2).map((l) => paint(theme, "thinking", `│ ${l}`))];
    }
    case "tool":
      return [...gap, ...(tool ? toolLines(tool, ctx) : [])];
    case "notice":
      return [...gap, ...noticeLines(item, ctx)];
    case "plan":
      return [...gap, ...planLines(item.entries, theme, width)];
  }
}

/** Where a streaming text can be cut: after its last blank line outside a code fence (0: nowhere yet). */
export function settledLength(text: string): number {
  let cut = 0;
  let fenced = false;
  let at = 0;
  for (const line of text.split("\n")) {
    const next = at + line.length + 1;
    if (/^\s{0,3}(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced && line.trim() === "" && next <= text.length) cut = next;
    at = next;
  }
  return cut;
}

/**
 * A message still streaming: its settled paragraphs are rendered once each
 * and kept, only the paragraph being written is rendered again per frame, so
 * a long answer does not make every frame slower.
 */
function streamingMarkdown(item: Extract<TranscriptItem, { type: "assistant" }>, ctx: TranscriptContext, cache: TranscriptCache): string[] {
  const stamp = `${ctx.width}|${ctx.theme.name}|${ctx.theme.mono}|${markdownLoaded()}`;
  let entry = cache.streams.get(item.id);
  if (!entry || entry.stamp !== stamp) {
    entry = { stamp, chunks: [] };
    cache.streams.set(item.id, entry);
  }
  const settled = settledLength(item.text);
  let end = entry.chunks.at(-1)?.end ?? 0;
  if (settled > end) {
    entry.chunks.push({ end: settled, lines: renderMarkdown(item.text.slice(end, settled), ctx.width, ctx.theme) });
    end = settled;
  }
  const out: string[] = [];
  for (const chunk of entry.chunks) if (chunk.lines.length) out.push(...(out.length ? [""] : []), ...chunk.lines);
  const tail = renderMarkdown(item.text.slice(end), ctx.width, ctx.theme);
  if (tail.length && tail.some((l) => l !== "")) out.push(...(out.length ? [""] : []), ...tail);
  return out;
}

function toolLines(tool: ToolCall, ctx: TranscriptContext): string[] {
  const { theme, width, now } = ctx;
  const token = tool.status === "error" ? "error" : tool.status === "ok" ? "success" : tool.status === "waiting" ? "warning" : "dim";
  const tail = ` ${statusWord(tool)}${duration(tool, now) ? ` ${duration(tool, now)}` : ""}`;
  const label = callLabel(tool);
  const lead = label.lead ? `${sanitize(label.lead)} ` : "";
  const head = `${paint(theme, token, statusMark(tool, now))} ${lead ? paint(theme, "tool", lead) : ""}`;
  const room = Math.max(4, width - lead.length - tail.length - 3);
  const summary = truncate(sanitize(label.rest).replace(/\s+/g, " "), room);
  const lines = [`${head}${summary}${paint(theme, token === "dim" ? "dim" : token, tail)}`];
  if (tool.status === "error" && tool.output && !ctx.outputExpanded) {
    // A failed command's error is Keen's note on it ("exit code 1"), not its first line of output.
    const first = tool.note ?? sanitize(tool.output).trim().split("\n")[0] ?? "";
    lines.push(`  ${paint(theme, "error", truncate(first, width - 2))}`);
  }
  lines.push(...inlineLines(tool, width, theme, ctx.outputExpanded === true, now));
  return lines.map((l) => truncate(l, width));
}

function noticeLines(item: Extract<TranscriptItem, { type: "notice" }>, ctx: TranscriptContext): string[] {
  const { theme, width } = ctx;
  const text = sanitize(item.text);
  switch (item.level) {
    case "error": return wrapLine(`Error: ${text}`, width, 7).map((l) => paint(theme, "error", l));
    case "warning": return wrap(text, width).map((l) => paint(theme, "warning", l));
    case "info": return wrap(text, width).map((l) => paint(theme, "dim", l));
    case "setup":
      return [
        ...wrap(text, width).map((l) => paint(theme, "warning", l)),
        ...setupLines(width).flatMap(([token, line]) => wrapLine(line, width, 16).map((l) => paint(theme, token, l))),
      ];
  }
}

/** The transcript's visible lines for a scroll position; only items in view are rendered. */
export function transcriptWindow(view: SessionView, ctx: TranscriptContext, cache: TranscriptCache, scroll: Scroll, height: number): Window {
  return windowOf(view.items.length, (i) => itemLines(view, i, ctx, cache), scroll, height);
}

/** Lines of item `i`, through the cache (running tools are redrawn: their spinner and clock move). */
export function itemLines(view: SessionView, i: number, ctx: TranscriptContext, cache: TranscriptCache): string[] {
  const item = view.items[i]!;
  const prev = view.items[i - 1];
  const tool = item.type === "tool" ? view.tools.get(item.callId) : undefined;
  if (tool?.status === "running") return renderItem(item, prev, tool, ctx);
  if (item.type === "assistant" && !item.streaming) cache.streams.delete(item.id);
  const stamp = `${ctx.width}|${ctx.theme.name}|${ctx.theme.mono}|${ctx.thinkingExpanded}|${ctx.outputExpanded}|${prev?.type}|${markdownLoaded()}`;
  return cache.lines(tool ?? item, stamp, () => renderItem(item, prev, tool, ctx, cache));
}
