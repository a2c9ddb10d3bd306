import type { PermissionMode } from "../../protocol/commands.js";
import type { EventOf, KeenEvent } from "../../protocol/events.js";
import { nestedIn } from "../../protocol/kinds.js";
import { addUsage, emptyUsage } from "../../protocol/usage.js";
import { applyRewind, currentTurn } from "./rewind-state.js";
import type { SessionView, ToolCall, TranscriptItem } from "./view-types.js";

/*
 * The session as the TUI shows it, built from bus events by one reducer —
 * the same for live events and for history replayed on resume.
 */

export type { DiffEntry, PendingPermission, SessionView, ToolCall, TranscriptItem } from "./view-types.js";

/** Actions the TUI itself adds to the stream (a prompt typed, a message of its own). */
export type LocalAction =
  | { kind: "local-prompt"; text: string }
  | { kind: "local-notice"; level: "info" | "warning" | "error" | "setup"; text: string }
  | { kind: "local-clear" }
  | { kind: "local-mode"; mode: PermissionMode }
  | { kind: "local-model"; model: string }
  | { kind: "local-continue-answered" }
  /** The engine refused a prompt (no provider, bad state): it never ran. */
  | { kind: "local-prompt-failed" };

export function createSessionView(init: { cwd: string; model: string; permissionMode: PermissionMode; sessionId?: string; unconfined?: boolean }): SessionView {
  return {
    sessionId: init.sessionId, model: init.model, cwd: init.cwd, permissionMode: init.permissionMode, unconfined: init.unconfined,
    items: [], tools: new Map(), toolOrder: [], diffs: [], permissions: [], running: false, attempt: 1,
    usage: emptyUsage(), askContinue: false, lastAnswer: "", nextId: 1, mcp: new Map(), jobs: new Map(), plan: undefined,
    // Named even when empty, so clearing the view (Object.assign over it) resets them too.
    costUsd: undefined, context: undefined, retry: undefined, phaseSince: undefined, lastDataAt: undefined, lastPrompt: undefined, forkOf: undefined,
  };
}

/**
 * Commands whose refusals are not drawn as an error line: `@` completion asks on every keystroke (a refusal
 * there, no provider yet, is not worth a notice each time); rewind and fork say why in words of their own.
 */
const SAYS_ITS_OWN_REFUSAL = new Set<string>(["list-files", "list-commands", "list-checkpoints", "rewind", "fork-session"]);

/**
 * Applies one event or local action. Contract: updates `view` in place and
 * returns it (O(1) per event, so a 10k-event replay stays linear), but
 * replaces — never mutates — any item, tool call or diff it changes, so a
 * render cache keyed by object identity is always right. Never throws on an
 * unknown or out-of-order event; it is ignored.
 */
export function reduce(view: SessionView, event: KeenEvent | LocalAction): SessionView {
  const live = !("replay" in event && event.replay);
  if (live && "ts" in event && typeof event.ts === "number") stampTimers(view, event);
  // A subagent's events fold under its task call: only its calls' progress is drawn (its text is not the answer).
  const parentId = "ts" in event ? nestedIn(event) : undefined;
  if (parentId) {
    linkChild(view, parentId);
    if (!CHILD_KINDS.has(event.kind)) return view;
  }
  switch (event.kind) {
    case "local-prompt": {
      push(view, { type: "user", id: 0, text: event.text, state: "pending" });
      view.lastPrompt = event.text;
      view.phaseSince = view.lastDataAt = undefined;
      view.running = true;
      view.askContinue = false;
      break;
    }
    case "local-notice": push(view, { type: "notice", id: 0, level: event.level, text: event.text }); break;
    // The MCP servers outlive a cleared transcript.
    case "local-clear": Object.assign(view, createSessionView({ ...view, sessionId: undefined }), { mcp: view.mcp, jobs: view.jobs }); break;
    case "local-mode": view.permissionMode = event.mode; break;
    case "local-model": view.model = event.model; break;
    case "local-continue-answered": view.askContinue = false; break;
    case "local-prompt-failed": {
      let i = view.items.length - 1;
      while (i >= 0 && !(view.items[i]!.type === "user" && (view.items[i] as { state: string }).state === "pending")) i--;
      if (i >= 0) replace(view, i, { ...(view.items[i] as Extract<TranscriptItem, { type: "user" }>), state: "failed" });
      view.running = view.items.some((it) => it.type === "user" && it.state === "pending");
      break;
    }
    case "session-start":
      view.sessionId = event.conversation_id;
      view.model = event.model;
      view.cwd = event.cwd;
      if (event.permission_mode) view.permissionMode = event.permission_mode;
      if (event.sandboxed !== undefined) view.unconfined = event.sandbox_fallback !== undefined;
      break;
    case "text":
      if (event.role === "user") userText(view, event.content, live);
      else confirm(view, "assistant", event.content);
      if (event.role === "assistant") view.lastAnswer = event.content;
      break;
    case "thinking": confirm(view, "thinking", event.content); break;
    case "thinking-start":
      if (event.attempt >= view.attempt) push(view, { type: "thinking", id: 0, text: "", live: true, streaming: true, attempt: event.attempt });
      break;
    case "thinking-delta": appendDelta(view, "thinking", event.attempt, event.delta); break;
    case "text-delta": appendDelta(view, "assistant", event.attempt, event.delta); break;
    case "thinking-end": endStreaming(view, "thinking", event.attempt); break;
    case "content-end": endStreaming(view, "assistant", event.attempt); break;
    case "retry":
      view.attempt = event.attempt;
      view.items.forEach((it, i) => {
        if ((it.type === "assistant" || it.type === "thinking") && it.live && it.attempt < event.attempt) replace(view, i, { ...it, live: false, streaming: false, discarded: true, retryReason: event.reason });
      });
      view.retry = { attempt: event.attempt, reason: event.reason, until: event.ts + event.delay_ms, retry: event.retry, max: event.max_retries };
      view.phaseSince = event.ts + event.delay_ms;
      break;
    case "tool-use":
      view.retry = undefined;
      view.tools.set(event.tool_call_id, {
        callId: event.tool_call_id, name: event.tool_name, input: event.input, status: "pending", requestedAt: event.ts, output: "",
        ...(event.title ? { title: event.title } : {}), ...(event.tool_kind ? { kind: event.tool_kind } : {}),
        ...(parentId ? { parentId } : {}),
      });
      view.toolOrder.push(event.tool_call_id);
      if (parentId) linkChild(view, parentId, event.tool_call_id);
      else push(view, { type: "tool", id: 0, callId: event.tool_call_id });
      break;
    case "permission-request":
      view.permissions.push({ request_id: event.request_id, tool_name: event.tool_name, tool_call_id: event.tool_call_id, input: event.input, diff: event.diff, path: event.path, tool_kind: event.tool_kind, title: event.title });
      updateTool(view, event.tool_call_id, { status: "waiting" });
      if (event.diff) view.diffs.push({ callId: event.tool_call_id, path: event.path ?? "", diff: event.diff, pending: true, turn: currentTurn(view) });
      break;
    case "tool-start":
      dropPermission(view, event.tool_call_id);
      updateTool(view, event.tool_call_id, { status: "running", startedAt: event.ts });
      break;
    case "tool-update": updateTool(view, event.tool_call_id, { output: event.tail, totalBytes: event.total_bytes }); break;
    case "tool-result": toolResult(view, event); break;
    // The user's own `!command` is drawn as a call of a tool named "!", so it shows as bash does.
    case "shell-start":
      if (live) view.running = true;
      addTool(view, event.shell_id, "!", JSON.stringify({ command: event.command }), event.ts, { status: "running", startedAt: event.ts, ...shellCall(event.command) });
      break;
    case "shell-update": updateTool(view, event.shell_id, { output: event.tail, totalBytes: event.total_bytes }); break;
    case "shell":
      if (!view.tools.has(event.shell_id)) addTool(view, event.shell_id, "!", JSON.stringify({ command: event.command }), event.ts, shellCall(event.command));
      updateTool(view, event.shell_id, { status: event.is_error ? "error" : "ok", endedAt: event.ts, durationMs: event.duration_ms, output: event.output });
      if (live) view.running = false;
      break;
    case "error": push(view, { type: "notice", id: 0, level: "error", text: event.message }); break;
    case "compaction":
      // Start and end both arrive; the end says what happened (the transcript itself is kept whole).
      if (event.phase === "end") {
        push(view, event.error
          ? { type: "notice", id: 0, level: "error", text: `compaction (${event.trigger}) failed: ${event.error}; the session is unchanged` }
          : { type: "notice", id: 0, level: "info", text: `compacted (${event.trigger}): about ${event.tokens_before} → ${event.tokens_after ?? "?"} tokens` });
      }
      break;
    case "mcp-server":
      if (event.server && event.status !== "tools-changed" && event.status !== "warning") view.mcp = new Map(view.mcp).set(event.server, event.status);
      if (event.message && event.status !== "connected" && event.status !== "tools-changed") {
        push(view, { type: "notice", id: 0, level: "warning", text: `MCP: ${event.message}` });
      }
      break;
    case "plan-update":
      push(view, { type: "plan", id: 0, entries: event.entries });
      view.plan = event.entries;
      break;
    case "job": view.jobs = new Map(view.jobs).set(event.job_id, event); break;
    case "hook":
      // A hook that blocked or failed is worth a line; one that passed is not.
      if (event.outcome !== "ok") {
        const about = `${event.hook_event}${event.tool_name ? ` (${event.tool_name})` : ""}`;
        push(view, { type: "notice", id: 0, level: event.outcome === "blocked" ? "info" : "warning", text: `hook ${about} ${event.outcome}${event.message ? `: ${event.message}` : ""}` });
      }
      break;
    case "rewind": push(view, { type: "notice", id: 0, level: "info", text: applyRewind(view, event) }); break;
    case "result": turnEnded(view, event); break;
    case "response":
      if (!event.ok && !SAYS_ITS_OWN_REFUSAL.has(event.command)) push(view, { type: "notice", id: 0, level: "error", text: `${event.command}: ${event.error ?? "failed"}` });
      break;
    default: break; // memory is never shown; internal kinds carry nothing to draw
  }
  return view;
}

/** A new phase (a step's first delta, a tool, a prompt) restarts the status timer; any event is data. */
function stampTimers(view: SessionView, event: KeenEvent & { ts: number }): void {
  const starts = ["text", "thinking-start", "tool-start", "tool-result", "content-end", "thinking-end"].includes(event.kind)
    || (event.kind === "text-delta" && !streamingAnswer(view));
  if (starts || view.phaseSince === undefined) view.phaseSince = event.ts;
  view.lastDataAt = event.ts;
}

/** The answer being streamed right now, if any. */
export function streamingAnswer(view: SessionView): boolean {
  const last = view.items.at(-1);
  return last?.type === "assistant" && last.streaming;
}

function push(view: SessionView, item: TranscriptItem): void {
  view.items.push({ ...item, id: view.nextId++ });
}

function replace(view: SessionView, index: number, item: TranscriptItem): void {
  view.items[index] = item;
}

function userText(view: SessionView, text: string, live: boolean): void {
  if (live) {
    const i = view.items.findIndex((it) => it.type === "user" && it.state === "pending" && it.text === text);
    if (i >= 0) {
      replace(view, i, { ...(view.items[i] as Extract<TranscriptItem, { type: "user" }>), state: "sent" });
      view.running = true;
      return;
    }
    view.running = true;
  }
  push(view, { type: "user", id: 0, text, state: "sent" });
}

/** The newest live block of a kind that the current attempt is still writing, or -1. */
function liveIndex(view: SessionView, type: "assistant" | "thinking", attempt: number, streamingOnly: boolean): number {
  for (let i = view.items.length - 1; i >= 0; i--) {
    const it = view.items[i]!;
    if (it.type === "user") return -1;
    if (it.type === type && it.live && it.attempt === attempt && (!streamingOnly || it.streaming)) return i;
  }
  return -1;
}

function appendDelta(view: SessionView, type: "assistant" | "thinking", attempt: number, delta: string): void {
  if (attempt < view.attempt) return; // a retried attempt's leftovers
  view.attempt = attempt;
  view.retry = undefined;
  view.running = true;
  const i = liveIndex(view, type, attempt, true);
  if (i < 0) {
    push(view, { type, id: 0, text: delta, live: true, streaming: true, attempt } as TranscriptItem);
    return;
  }
  const it = view.items[i] as Extract<TranscriptItem, { type: "assistant" | "thinking" }>;
  replace(view, i, { ...it, text: it.text + delta });
}

function endStreaming(view: SessionView, type: "assistant" | "thinking", attempt: number): void {
  const i = liveIndex(view, type, attempt, true);
  if (i >= 0) replace(view, i, { ...(view.items[i] as Extract<TranscriptItem, { type: "assistant" | "thinking" }>), streaming: false });
}

/** A complete block: it settles the oldest unsettled live block of its kind, or is appended (no deltas, or a replay). */
function confirm(view: SessionView, type: "assistant" | "thinking", text: string): void {
  let first = -1;
  for (let i = view.items.length - 1; i >= 0; i--) {
    const it = view.items[i]!;
    if (it.type === "user") break;
    if (it.type === type && it.live) first = i;
  }
  if (first >= 0) {
    replace(view, first, { ...(view.items[first] as Extract<TranscriptItem, { type: "assistant" | "thinking" }>), text, live: false, streaming: false });
    return;
  }
  push(view, { type, id: 0, text, live: false, streaming: false, attempt: view.attempt } as TranscriptItem);
}

/** A `!command` describes itself as an exec call titled by its command, so it reads "! git status" as bash's calls do. */
function shellCall(command: string): Partial<ToolCall> {
  return { title: command, kind: "exec" };
}

function addTool(view: SessionView, callId: string, name: string, input: string, ts: number, change: Partial<ToolCall>): void {
  view.tools.set(callId, { callId, name, input, status: "pending", requestedAt: ts, output: "", ...change });
  view.toolOrder.push(callId);
  push(view, { type: "tool", id: 0, callId });
}

function updateTool(view: SessionView, callId: string, change: Partial<ToolCall>): void {
  const tool = view.tools.get(callId);
  if (!tool) return;
  view.tools.set(callId, { ...tool, ...change });
  if (tool.parentId) linkChild(view, tool.parentId);
}

/** What of a subagent's stream reaches the view: its calls and their permission requests. */
const CHILD_KINDS = new Set<string>(["tool-use", "permission-request", "tool-start", "tool-update", "tool-result"]);

/** Marks `parentId` as a delegating call and refreshes its snapshot of its children (adding `childId`). */
function linkChild(view: SessionView, parentId: string, childId?: string): void {
  const parent = view.tools.get(parentId);
  if (!parent) return;
  const ids = (parent.children ?? []).map((c) => c.callId);
  if (childId && !ids.includes(childId)) ids.push(childId);
  const children = ids.map((id) => view.tools.get(id)).filter((c): c is ToolCall => c !== undefined);
  view.tools.set(parentId, { ...parent, children });
}

function dropPermission(view: SessionView, callId: string): void {
  if (view.permissions.some((p) => p.tool_call_id === callId)) view.permissions = view.permissions.filter((p) => p.tool_call_id !== callId);
}

function toolResult(view: SessionView, event: EventOf<"tool-result">): void {
  dropPermission(view, event.tool_call_id);
  if (!view.tools.has(event.tool_call_id)) {
    view.tools.set(event.tool_call_id, { callId: event.tool_call_id, name: event.tool_name, input: "{}", status: "pending", requestedAt: event.ts, output: "" });
    view.toolOrder.push(event.tool_call_id);
  }
  const diff = typeof event.details?.diff === "string" ? event.details.diff : undefined;
  const lines = event.details?.output_lines;
  const note = event.details?.note;
  updateTool(view, event.tool_call_id, {
    status: event.interrupted ? "interrupted" : event.is_error ? "error" : "ok", endedAt: event.ts, output: event.result, durationMs: event.duration_ms, diff,
    notRun: event.not_run, outputLines: typeof lines === "number" ? lines : undefined, note: typeof note === "string" ? note : undefined,
  });
  const pending = view.diffs.findIndex((d) => d.callId === event.tool_call_id && d.pending);
  const path = typeof event.details?.path === "string" ? event.details.path : undefined;
  if (diff) {
    const entry = { callId: event.tool_call_id, path: path ?? "", diff, pending: false, turn: currentTurn(view) };
    if (pending >= 0) view.diffs[pending] = entry;
    else view.diffs.push(entry);
  } else if (pending >= 0) {
    view.diffs.splice(pending, 1); // denied or failed: nothing was written
  }
}

function turnEnded(view: SessionView, event: EventOf<"result">): void {
  view.sessionId = event.session_id || view.sessionId;
  view.usage = addUsage(view.usage, event.usage);
  // Cost is known only when every turn's price was: one unpriced turn makes the session's total unknown.
  view.costUsd = event.cost_usd !== undefined && view.costUsd !== null ? (view.costUsd ?? 0) + event.cost_usd : null;
  if (event.context) view.context = event.context;
  view.retry = undefined;
  view.permissions = [];
  view.attempt = 1;
  for (let i = 0; i < view.items.length; i++) {
    const it = view.items[i]!;
    if ((it.type === "assistant" || it.type === "thinking") && it.streaming) replace(view, i, { ...it, streaming: false, live: false });
    if (it.type === "user" && it.state === "pending") replace(view, i, { ...it, state: "sent" });
  }
  for (const id of view.toolOrder) {
    const tool = view.tools.get(id)!;
    if (tool.status === "pending" || tool.status === "waiting" || tool.status === "running") updateTool(view, id, { status: "cancelled", endedAt: event.ts });
  }
  view.diffs = view.diffs.filter((d) => !d.pending);
  if (event.status === "interrupted") push(view, { type: "notice", id: 0, level: "warning", text: "Interrupted." });
  if (event.errors.length && !errorShownThisTurn(view)) {
    for (const text of event.errors) push(view, { type: "notice", id: 0, level: "error", text });
  }
  view.askContinue = event.status === "max_turns";
  if (event.status === "error" && view.lastPrompt) push(view, { type: "notice", id: 0, level: "info", text: "/retry sends the last prompt again." });
  view.running = false;
  view.phaseSince = view.lastDataAt = undefined;
}

function errorShownThisTurn(view: SessionView): boolean {
  for (let i = view.items.length - 1; i >= 0; i--) {
    const it = view.items[i]!;
    if (it.type === "user") return false;
    if (it.type === "notice" && (it.level === "error" || it.level === "setup")) return true;
  }
  return false;
}
