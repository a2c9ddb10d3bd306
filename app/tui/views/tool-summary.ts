import type { ToolCall } from "../state.js";

/** The one-line summary of a tool call's input: the command, the path, the pattern. */
export function summarizeInput(name: string, input: string): string {
  let args: Record<string, unknown>;
  try {
    const parsed = JSON.parse(input) as unknown;
    args = parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
  } catch {
    return input;
  }
  const str = (key: string) => (typeof args[key] === "string" ? (args[key] as string) : undefined);
  switch (name) {
    case "bash":
    case "!": return str("command") ?? "";
    case "read_file": {
      const range = typeof args.offset === "number" ? `:${args.offset}${typeof args.limit === "number" ? `+${args.limit}` : ""}` : "";
      return `${str("path") ?? ""}${range}`;
    }
    case "write_file":
    case "edit_file":
    case "list": return str("path") ?? ".";
    case "grep": return [str("pattern") && `/${str("pattern")}/`, str("path"), str("glob")].filter(Boolean).join(" ");
    case "glob": return [str("pattern"), str("path")].filter(Boolean).join(" in ");
    default: {
      const first = Object.entries(args).find(([, v]) => typeof v === "string");
      return first ? `${first[0]}: ${first[1] as string}` : input;
    }
  }
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
