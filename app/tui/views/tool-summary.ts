import type { ToolCall } from "../state.js";

/**
 * The one-line summary of a call: the title it gave itself (its tool's `describe`: the command,
 * `Read src/a.ts`); for a call without one (an unknown tool, an older session), its first
 * string argument, else its raw input.
 */
export function summarizeInput(tool: Pick<ToolCall, "input" | "title">): string {
  if (tool.title) return tool.title;
  let args: Record<string, unknown>;
  try {
    const parsed = JSON.parse(tool.input) as unknown;
    args = parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
  } catch {
    return tool.input;
  }
  const first = Object.entries(args).find(([, v]) => typeof v === "string");
  return first ? `${first[0]}: ${first[1] as string}` : tool.input;
}

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** The status mark of a call: a spinner frame while it runs (from `now`), then a plain symbol. */
export function statusMark(tool: ToolCall, now: number): string {
  switch (tool.status) {
    case "pending": return "·";
    case "waiting": return "?";
    case "running": return SPINNER[Math.floor(now / 100) % SPINNER.length]!;
    case "ok": return "✓";
    case "error": return "✗";
    case "cancelled": return "-";
    case "interrupted": return "-";
  }
}

/** Words for the status, so it reads without colour. */
export function statusWord(tool: ToolCall): string {
  switch (tool.status) {
    case "pending": return "queued";
    case "waiting": return "needs approval";
    case "running": return "running";
    case "ok": return "ok";
    case "error": return "failed";
    case "cancelled": return "cancelled";
    case "interrupted": return "interrupted";
  }
}

/** How long a call took, or has run so far: `850ms`, `3.2s`, `2m05s`. */
export function duration(tool: ToolCall, now: number): string {
  const start = tool.startedAt ?? (tool.status === "ok" || tool.status === "error" || tool.status === "interrupted" ? tool.requestedAt : undefined);
  if (start === undefined) return "";
  return formatMs((tool.endedAt ?? now) - start);
}

export function formatMs(ms: number): string {
  if (ms < 0) ms = 0;
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}
