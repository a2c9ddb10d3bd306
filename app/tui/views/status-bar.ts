import { homedir } from "node:os";
import type { Theme } from "../../../themes/index.js";
import { streamingAnswer, type SessionView } from "../state.js";
import { runningJobs } from "./jobs.js";
import { paint } from "../style.js";
import { fit, sanitize, textWidth, truncateStart } from "../text.js";

/** A stream silent for this long is shown as such (the engine's watchdog aborts it later). */
const QUIET_MS = 10_000;

/** What the session is doing, in words and with a timer: thinking 12s, streaming, running bash 3s, retry 2/4 in 4s, no data for 30s. */
export function phase(view: SessionView, now: number): string {
  if (view.permissions.length) return "waiting for you";
  if (view.askContinue) return "waiting for you";
  if (view.retry) {
    const left = Math.ceil((view.retry.until - now) / 1000);
    const which = view.retry.retry ? ` ${view.retry.retry}${view.retry.max ? `/${view.retry.max}` : ""}` : "";
    return left > 0 ? `retry${which} in ${left}s` : `retry${which}`;
  }
  if (!view.running) return "idle";
  const secs = (since: number | undefined) => (since === undefined ? "" : ` ${Math.max(0, Math.floor((now - since) / 1000))}s`);
  for (const id of view.toolOrder.slice(-4)) {
    const tool = view.tools.get(id)!;
    if (tool.status === "running") return `running ${tool.name}${secs(tool.startedAt)}`;
  }
  if (streamingAnswer(view)) return view.lastDataAt !== undefined && now - view.lastDataAt >= QUIET_MS ? `no data for${secs(view.lastDataAt)}` : "streaming";
  return `thinking${secs(view.phaseSince)}`;
}

/** 12345 → "12.3k". */
export function compact(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** The directory with the home directory as `~`. */
function shortCwd(cwd: string): string {
  const home = homedir();
  return sanitize(cwd === home || cwd.startsWith(home + "/") ? `~${cwd.slice(home.length)}` : cwd);
}

/** The most of the status bar a directory takes, and the least worth showing (its end names the project). */
const CWD_MAX = 40;
const CWD_MIN = 12;

/**
 * The status bar, one line: state first (it changes most and matters most),
 * then model, mode, context, tokens, session and directory; what does not
 * fit the width is left out from the end.
 */
export function statusBar(view: SessionView, width: number, theme: Theme, now: number, note?: string): string {
  const state = phase(view, now);
  const parts: string[] = [sanitize(view.model) || "no model", `mode: ${view.permissionMode}`];
  // Kept near the front: a user who expects confined commands must see at once that they are not.
  if (view.unconfined) parts.splice(1, 0, "bash unconfined (no sandbox)");
  if (view.context && view.context.window > 0) {
    const pct = Math.round((view.context.used / view.context.window) * 100);
    parts.push(`ctx ${compact(view.context.used)}/${compact(view.context.window)} ${pct}%`);
  }
  if (view.usage.total_tokens > 0) parts.push(`${compact(view.usage.input_tokens)} in ${compact(view.usage.output_tokens)} out`);
  if (typeof view.costUsd === "number") parts.push(`~$${view.costUsd < 0.01 ? view.costUsd.toFixed(4) : view.costUsd.toFixed(2)}`);
  // Near the front: a running dev server is something the user should not forget about.
  const jobs = runningJobs(view.jobs);
  if (jobs) parts.splice(view.unconfined ? 2 : 1, 0, `${jobs} job${jobs === 1 ? "" : "s"} running (/jobs)`);
  if (view.mcp.size) {
    const up = [...view.mcp.values()].filter((s) => s === "connected").length;
    parts.push(`mcp ${up}/${view.mcp.size}`);
  }
  // Ids are time-ordered: a fork made minutes after its parent shares its first 8 characters, so both show their first 13.
  if (view.sessionId) parts.push(view.forkOf ? `${view.sessionId.slice(0, 13)} (fork of ${view.forkOf.slice(0, 13)})` : view.sessionId.slice(0, 8));
  const head = ` ${state} `;
  const noteText = note ? ` ${sanitize(note)} ` : "";
  const room = width - textWidth(head) - textWidth(noteText) - 1;
  let body = "";
  let all = true;
  for (const part of parts) {
    const next = body ? `${body} | ${part}` : ` ${part}`;
    if (textWidth(next) > room) {
      all = false;
      break;
    }
    body = next;
  }
  // The directory last, cut from its start to the room left: a long path no longer drops it whole.
  const cwd = shortCwd(view.cwd);
  const cwdRoom = Math.min(CWD_MAX, room - textWidth(body) - (body ? 3 : 1));
  if (all && (textWidth(cwd) <= cwdRoom || cwdRoom >= CWD_MIN)) body = `${body}${body ? " | " : " "}${truncateStart(cwd, cwdRoom)}`;
  const line = paint(theme, "statusAccent", head) + paint(theme, "status", fit(body + " ", Math.max(0, width - textWidth(head) - textWidth(noteText))));
  return fit(line + (noteText ? paint(theme, "statusAccent", noteText) : ""), width);
}
