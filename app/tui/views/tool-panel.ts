import type { Theme } from "../../../themes/index.js";
import type { SessionView, ToolCall } from "../state.js";
import { paint } from "../style.js";
import { fit, sanitize, truncate, wrap } from "../text.js";
import { duration, statusMark, statusWord, callLabel } from "./tool-summary.js";
import { windowOf, type Scroll, type Window } from "./window.js";

/** The tool panel's own state: which call is selected and which show their output. */
export interface ToolPanelUi {
  selected?: string;
  expanded: Set<string>;
  scroll: Scroll;
}

/** Output lines shown for an expanded call (its tail; the model saw the rest). */
const OUTPUT_LINES = 200;

/** One call: its head line, and its output when expanded. */
export function toolBlock(tool: ToolCall, selected: boolean, expanded: boolean, width: number, theme: Theme, now: number): string[] {
  const token = tool.status === "error" ? "error" : tool.status === "ok" ? "success" : tool.status === "waiting" ? "warning" : "dim";
  const time = duration(tool, now);
  const right = ` ${statusWord(tool)}${time ? ` ${time}` : ""}`;
  const label = callLabel(tool);
  const lead = label.lead ? `${sanitize(label.lead)} ` : "";
  const room = Math.max(1, width - lead.length - right.length - 2);
  const summary = fit(truncate(sanitize(label.rest).replace(/\s+/g, " "), room), room);
  let head = `${paint(theme, token, statusMark(tool, now))} ${lead ? paint(theme, "tool", lead) : ""}${summary}${paint(theme, token, right)}`;
  head = truncate(head, width);
  if (selected) head = paint(theme, "selection", fit(head.replace(/\x1b\[[0-9;]*m/g, ""), width));
  if (!expanded) return [head];
  const output = sanitize(tool.output || (tool.status === "running" ? "(no output yet)" : "(no output)")).replace(/\s+$/, "");
  let lines = wrap(output, width - 2);
  const cut = lines.length - OUTPUT_LINES;
  if (cut > 0) lines = [paint(theme, "dim", `… ${cut} earlier lines`), ...lines.slice(cut)];
  const size = tool.totalBytes !== undefined ? [paint(theme, "dim", `  ${tool.totalBytes} bytes of output`)] : [];
  return [head, ...lines.map((l) => `  ${tool.status === "error" ? paint(theme, "error", l) : l}`), ...size];
}

/** The visible lines of the tool panel. */
export function toolPanelWindow(view: SessionView, ui: ToolPanelUi, width: number, height: number, theme: Theme, now: number): Window {
  if (view.toolOrder.length === 0) return { lines: [paint(theme, "dim", "No tool calls yet.")], scroll: ui.scroll, more: { above: false, below: false } };
  const linesOf = (i: number) => {
    const id = view.toolOrder[i]!;
    return toolBlock(view.tools.get(id)!, ui.selected === id, ui.expanded.has(id), width, theme, now);
  };
  return windowOf(view.toolOrder.length, linesOf, ui.scroll, height);
}
