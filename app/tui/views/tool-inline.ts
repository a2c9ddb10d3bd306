import type { Theme } from "../../../themes/index.js";
import type { ToolCall } from "../state.js";
import { paint } from "../style.js";
import { sanitize, truncate, wrap } from "../text.js";
import { diffLines, diffView, revertedView } from "./diff-pane.js";
import { callLabel, statusMark, statusWord } from "./tool-summary.js";

/*
 * What a tool call shows under its line in the transcript: a running call's
 * newest output lines, a finished call's output folded to one line (Ctrl-O or
 * Enter on the transcript shows it whole), an edit's compact diff.
 */

/** Output lines a running call shows under its line (the newest). */
export const LIVE_TAIL_LINES = 5;
/** Diff lines an edit shows before "… n more"; Ctrl-O shows the whole diff. */
export const INLINE_DIFF_LINES = 12;
/** Output lines an expanded call shows at most (its end; the tool panel and the model have the rest). */
const EXPANDED_LINES = 200;

/** The key that shows or folds output, as help and the folded line name it. */
export const EXPAND_KEY = "Ctrl-O";

/** Terminal output made printable: colour codes dropped, a line redrawn with `\r` (a progress bar) kept as last drawn. */
export function outputText(text: string): string {
  const plain = text.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "").replace(/\x1b\][^\x07\x1b]*(\x07|\x1b\\)/g, "");
  const lines = plain.replace(/\r\n/g, "\n").split("\n").map((line) => line.slice(line.lastIndexOf("\r") + 1));
  return sanitize(lines.join("\n")).replace(/\s+$/, "");
}

/** True for a call whose output is worth drawing inline: it streamed, or it runs commands (bash, a user's `!command`). */
function showsOutput(tool: ToolCall): boolean {
  return tool.totalBytes !== undefined || tool.kind === "exec";
}

/** The lines under a tool call's head line; `expanded` is the transcript's Ctrl-O state. */
export function inlineLines(tool: ToolCall, width: number, theme: Theme, expanded: boolean, now = 0): string[] {
  const room = Math.max(1, width - 4);
  if (tool.children) return subagentLines(tool, tool.children, room, theme, expanded, now);
  if (tool.diff && tool.status === "ok") {
    const lines = tool.reverted ? [paint(theme, "dim", "(reverted: the file was put back)"), ...revertedView(diffView(tool.diff, room, theme), theme).lines] : diffLines(tool.diff, room, theme);
    const shown = expanded ? lines : lines.slice(0, INLINE_DIFF_LINES);
    const more = lines.length - shown.length;
    return [...shown.map((l) => `    ${l}`), ...(more > 0 ? [paint(theme, "dim", `    … ${more} more lines (${EXPAND_KEY} shows)`)] : [])];
  }
  // A call refused before it ran says so, whatever its tool (a read shows no output, but "interrupted" alone hides that it never ran).
  // Expanded, a command shows its whole result below; folded, a refusal marked failed (denied, blocked by a hook)
  // already shows its reason under its line, as the error.
  if (tool.notRun && !(expanded && showsOutput(tool))) {
    const reason = outputText(tool.output).split("\n")[0] ?? "";
    return tool.status === "error" && !expanded ? [] : [paint(theme, "dim", truncate(`  ⎿ ${reason}`, room + 4))];
  }
  if (!showsOutput(tool)) return [];
  const text = outputText(tool.output);
  if (tool.status === "running" || tool.status === "pending") {
    const tail = text ? text.split("\n").slice(-LIVE_TAIL_LINES) : [];
    return tail.map((l) => paint(theme, "dim", `  │ ${truncate(l, room)}`));
  }
  if (!text) return [];
  if (!expanded) return foldedLine(tool, room, theme);
  let lines = wrap(text, room);
  const cut = lines.length - EXPANDED_LINES;
  if (cut > 0) lines = [paint(theme, "dim", `… ${cut} earlier lines (the tool panel has the call)`), ...lines.slice(cut)];
  const token = tool.status === "error" ? "error" : "text";
  return lines.map((l) => `  │ ${paint(theme, token, l)}`);
}

/** The one line a finished call's output folds to: what the tool printed, counted (as the tool counted it, apart from Keen's note). */
function foldedLine(tool: ToolCall, room: number, theme: Theme): string[] {
  const { note } = tool;
  const n = tool.outputLines ?? outputText(tool.output).split("\n").length;
  if (tool.status === "error" && n === 1 && note === undefined) return []; // its one line shows already, as the error
  const count = n ? `${n} ${n === 1 ? "line" : "lines"} of output` : "no output";
  // An interrupted call shows no error line, so its note ("aborted", "timed out after 5s") goes here, cut at its details.
  const why = note !== undefined && tool.status !== "error" ? `, ${note.split(";")[0]}` : "";
  return [paint(theme, "dim", truncate(`  ⎿ ${count}${why}${n ? ` (${EXPAND_KEY} shows)` : ""}`, room + 4))];
}

/** A subagent's calls shown while it runs (its newest); the whole group shows with Ctrl-O. */
const LIVE_CHILD_LINES = 3;

/**
 * A `task` call's subagent, folded under its line: while it runs, its newest calls; once it
 * ended, one line counting its calls and its answer's lines. Expanded (Ctrl-O): every call
 * of the child, then its answer (the call's result).
 */
function subagentLines(tool: ToolCall, children: ToolCall[], room: number, theme: Theme, expanded: boolean, now: number): string[] {
  const childLine = (child: ToolCall) => {
    const label = callLabel(child);
    const text = `${statusMark(child, now)} ${label.lead ? `${label.lead} ` : ""}${label.rest.replace(/\s+/g, " ")} ${statusWord(child)}`;
    return paint(theme, child.status === "error" ? "error" : "dim", `  │ ${truncate(sanitize(text), room)}`);
  };
  const calls = `${children.length} tool ${children.length === 1 ? "call" : "calls"}`;
  if (tool.status === "running" || tool.status === "pending" || tool.status === "waiting") {
    const shown = expanded ? children : children.slice(-LIVE_CHILD_LINES);
    const hidden = children.length - shown.length;
    return [...(hidden > 0 ? [paint(theme, "dim", `  │ … ${hidden} earlier`)] : []), ...shown.map(childLine)];
  }
  const answer = outputText(tool.output);
  if (!expanded) {
    // A failed or interrupted task's result is Keen's word on it ("The subagent was interrupted."), not an answer;
    // a task's details count its answer's own lines and carry Keen's note (a step limit) apart (app/tools/task.ts).
    const n = tool.status === "ok" ? (tool.outputLines ?? (answer ? answer.split("\n").length : 0)) : 0;
    const said = tool.status !== "ok" ? ", no answer" : n ? `, answer ${n} ${n === 1 ? "line" : "lines"}` : "";
    const why = tool.note && tool.status === "ok" ? `, ${tool.note}` : "";
    return [paint(theme, "dim", truncate(`  ⎿ subagent: ${calls}${said}${why} (${EXPAND_KEY} shows)`, room + 4))];
  }
  let lines = answer ? wrap(answer, room) : [];
  const cut = lines.length - EXPANDED_LINES;
  if (cut > 0) lines = [`… ${cut} earlier lines`, ...lines.slice(cut)];
  const token = tool.status === "error" ? "error" : "text";
  return [...children.map(childLine), ...lines.map((l) => `  │ ${paint(theme, token, l)}`)];
}
