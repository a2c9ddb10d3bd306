import type { PermissionMode } from "../../protocol/commands.js";
import type { EventOf, KeenEvent, PlanEntry, ToolKind } from "../../protocol/events.js";
import type { Usage } from "../../protocol/messages.js";
import { addUsage, emptyUsage } from "../../protocol/usage.js";

/*
 * The session as the TUI shows it, built from bus events by one reducer —
 * the same for live events and for history replayed on resume.
 */

/** One entry of the transcript. Items are replaced, never mutated, when they change (views cache by identity). */
export type TranscriptItem =
  // A prompt typed during a turn is not an item: the controller holds it in its queue until its turn starts.
  | { type: "user"; id: number; text: string; state: "sent" | "pending" | "failed" }
  // `discarded`: a retry restarted the step; the partial text stays on screen, marked, and is never sent again.
  | { type: "assistant"; id: number; text: string; live: boolean; streaming: boolean; attempt: number; discarded?: boolean }
  | { type: "thinking"; id: number; text: string; live: boolean; streaming: boolean; attempt: number; discarded?: boolean }
  | { type: "tool"; id: number; callId: string }
  | { type: "notice"; id: number; level: "info" | "warning" | "error" | "setup"; text: string }
  // The model's whole plan as one `plan-update` set it (todo_write): shown each time it changes.
  | { type: "plan"; id: number; entries: PlanEntry[] };

/** One tool call for the tool panel; replaced on every change. */
export interface ToolCall {
  callId: string;
  name: string;
  input: string;
  status: "pending" | "waiting" | "running" | "ok" | "error" | "cancelled" | "interrupted";
  requestedAt: number;
  startedAt?: number;
  endedAt?: number;
  /** How long the tool ran, as its result says: the one figure shown once it ended, live and after resume alike. */
  durationMs?: number;
  output: string;
  totalBytes?: number;
  /** The call's own one-line description (tool-use `title`). */
  title?: string;
  /** What its tool does (tool-use `tool_kind`). */
  kind?: ToolKind;
  /** The change an edit or write made (its result's `details.diff`), drawn under its line in the transcript. */
  diff?: string;
}

/** A diff for the diff pane: applied (from a tool result) or awaiting approval. */
export interface DiffEntry {
  callId: string;
  path: string;
  diff: string;
  pending: boolean;
}

/** A permission request waiting for the user's answer. */
export type PendingPermission = Pick<EventOf<"permission-request">, "request_id" | "tool_name" | "tool_call_id" | "input" | "diff" | "path" | "tool_kind" | "title">;

/** Everything the views draw that comes from events (UI-only state lives in the app). */
export interface SessionView {
  sessionId?: string;
  model: string;
  cwd: string;
  permissionMode: PermissionMode;
  /** bash runs unconfined although the sandbox mode is auto (its dependencies are missing). */
  unconfined?: boolean;
  items: TranscriptItem[];
  tools: Map<string, ToolCall>;
  toolOrder: string[];
  diffs: DiffEntry[];
  permissions: PendingPermission[];
  /** True from a prompt until its turn's `result`. */
  running: boolean;
  attempt: number;
  retry?: { attempt: number; reason: string; until: number; retry?: number; max?: number };
  /** When the current phase of the turn began and when the stream last brought anything (event times, ms): the status bar's timers. */
  phaseSince?: number;
  lastDataAt?: number;
  /** The last prompt sent, for `/retry`. */
  lastPrompt?: string;
  usage: Usage;
  /** Estimated cost of this view's turns; undefined before the first, null once a turn had no price. */
  costUsd?: number | null;
  context?: { used: number; window: number };
  /** The last turn stopped at the step limit: ask whether to continue. */
  askContinue: boolean;
  lastAnswer: string;
  nextId: number;
  /** MCP servers by name and their latest status (`mcp-server` events), for the status bar. */
  mcp: Map<string, EventOf<"mcp-server">["status"]>;
  /** The model's plan now (the latest `plan-update`), for the plan panel. */
  plan?: PlanEntry[];
  /** Background jobs by id as their `job` events last said (they belong to the process, so they outlive a cleared view). */
  jobs: Map<string, EventOf<"job">>;
}

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
    costUsd: undefined, context: undefined, retry: undefined, phaseSince: undefined, lastDataAt: undefined, lastPrompt: undefined,
  };
}

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
        if ((it.type === "assistant" || it.type === "thinking") && it.live && it.attempt < event.attempt) replace(view, i, { ...it, live: false, streaming: false, discarded: true });
      });
      view.retry = { attempt: event.attempt, reason: event.reason, until: event.ts + event.delay_ms, retry: event.retry, max: event.max_retries };
      view.phaseSince = event.ts + event.delay_ms;
      break;
    case "tool-use":
      view.retry = undefined;
      view.tools.set(event.tool_call_id, {
        callId: event.tool_call_id, name: event.tool_name, input: event.input, status: "pending", requestedAt: event.ts, output: "",
        ...(event.title ? { title: event.title } : {}), ...(event.tool_kind ? { kind: event.tool_kind } : {}),
      });
      view.toolOrder.push(event.tool_call_id);
      push(view, { type: "tool", id: 0, callId: event.tool_call_id });
      break;
    case "permission-request":
      view.permissions.push({ request_id: event.request_id, tool_name: event.tool_name, tool_call_id: event.tool_call_id, input: event.input, diff: event.diff, path: event.path, tool_kind: event.tool_kind, title: event.title });
      updateTool(view, event.tool_call_id, { status: "waiting" });
      if (event.diff) view.diffs.push({ callId: event.tool_call_id, path: event.path ?? "", diff: event.diff, pending: true });
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
    case "result": turnEnded(view, event); break;
    case "response":
      // `@` completion asks on every keystroke; a refusal there (no provider yet) is not worth a notice each time.
      if (!event.ok && event.command !== "list-files" && event.command !== "list-commands") push(view, { type: "notice", id: 0, level: "error", text: `${event.command}: ${event.error ?? "failed"}` });
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
  if (tool) view.tools.set(callId, { ...tool, ...change });
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
  updateTool(view, event.tool_call_id, {
    status: event.interrupted ? "interrupted" : event.is_error ? "error" : "ok", endedAt: event.ts, output: event.result, durationMs: event.duration_ms, diff,
  });
  const pending = view.diffs.findIndex((d) => d.callId === event.tool_call_id && d.pending);
  const path = typeof event.details?.path === "string" ? event.details.path : undefined;
  if (diff) {
    const entry = { callId: event.tool_call_id, path: path ?? "", diff, pending: false };
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
