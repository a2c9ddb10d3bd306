import type { ToolCall } from "../state.js";

/**
 * How a call reads on its one line: `lead` (drawn in the tool colour) and `rest`. A call that
 * describes itself shows its own title ("Edit src/a.ts", "Read src/a.ts:10-29"); an `exec`
 * call's title is the command itself, so the tool's name leads it ("bash npm test"). A call
 * without a title (an older session's, an unknown tool's, one titled only by its name) shows
 * its name and first string argument, else its raw input.
 */
export function callLabel(tool: Pick<ToolCall, "name" | "input" | "title" | "kind">): { lead: string; rest: string } {
  if (tool.title && tool.title !== tool.name) return tool.kind === "exec" ? { lead: tool.name, rest: tool.title } : { lead: "", rest: tool.title };
  let args: Record<string, unknown>;
  try {
    const parsed = JSON.parse(tool.input) as unknown;
    args = parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
  } catch {
    return { lead: tool.name, rest: tool.input };
  }
  const first = Object.entries(args).find(([, v]) => typeof v === "string");
  return { lead: tool.name, rest: first ? `${first[0]}: ${first[1] as string}` : tool.input };
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

/**
 * How long a call took, or has run so far: `850ms`, `3.2s`, `2m05s`. A finished call shows its result's
 * `duration_ms` (a replay has no `tool-start`, and the time since `tool-use` would count the permission wait);
 * a finished call without one shows no time rather than a wrong one.
 */
export function duration(tool: ToolCall, now: number): string {
  if (tool.durationMs !== undefined) return formatMs(tool.durationMs);
  if (tool.startedAt === undefined) return "";
  return formatMs((tool.endedAt ?? now) - tool.startedAt);
}

export function formatMs(ms: number): string {
  if (ms < 0) ms = 0;
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}
