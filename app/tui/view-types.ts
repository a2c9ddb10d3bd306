import type { PermissionMode } from "../../protocol/commands.js";
import type { EventOf, PlanEntry, ToolKind } from "../../protocol/events.js";
import type { Usage } from "../../protocol/messages.js";

/*
 * The shapes of the session as the TUI shows it (state.ts builds them from events).
 */

/** One entry of the transcript. Items are replaced, never mutated, when they change (views cache by identity). */
export type TranscriptItem =
  // A prompt typed during a turn is not an item: the controller holds it in its queue until its turn starts.
  | { type: "user"; id: number; text: string; state: "sent" | "pending" | "failed" }
  // `discarded`: a retry restarted the step (`retryReason`: why); the partial text stays on screen, marked, and is never sent again.
  | { type: "assistant"; id: number; text: string; live: boolean; streaming: boolean; attempt: number; discarded?: boolean; retryReason?: string }
  | { type: "thinking"; id: number; text: string; live: boolean; streaming: boolean; attempt: number; discarded?: boolean; retryReason?: string }
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
  /** The tool never started (its result's `not_run`): the output is Keen's reason, not the tool's. */
  notRun?: boolean;
  /** How many lines the tool itself produced (its result's `details.output_lines`), apart from Keen's note. */
  outputLines?: number;
  /** Keen's word on how it ended (`details.note`: "exit code 1", "aborted; …", "used all 8 steps"). */
  note?: string;
  /** The change an edit or write made (its result's `details.diff`), drawn under its line in the transcript. */
  diff?: string;
  /** An undo or a rewind put its file back: the diff is no longer what the file holds. */
  reverted?: boolean;
  /** A subagent's call: the `task` call it belongs to (drawn in that call's folded group, not as an item of its own). */
  parentId?: string;
  /** A `task` call whose subagent has spoken: its child's calls as they are now, in order (a snapshot, replaced on change). */
  children?: ToolCall[];
}

/** A diff for the diff pane: applied (from a tool result) or awaiting approval. */
export interface DiffEntry {
  callId: string;
  path: string;
  diff: string;
  pending: boolean;
  /** The id of the prompt item whose turn made the change (0: before any prompt); undo and rewind find a turn's changes by it. */
  turn: number;
  /** An undo or a rewind put the file back: the pane shows the change dim, tagged "reverted". */
  reverted?: boolean;
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
  /** The session this one was forked from (`/fork`), for the status bar. */
  forkOf?: string;
  /** MCP servers by name and their latest status (`mcp-server` events), for the status bar. */
  mcp: Map<string, EventOf<"mcp-server">["status"]>;
  /** The model's plan now (the latest `plan-update`), for the plan panel. */
  plan?: PlanEntry[];
  /** Background jobs by id as their `job` events last said (they belong to the process, so they outlive a cleared view). */
  jobs: Map<string, EventOf<"job">>;
}
