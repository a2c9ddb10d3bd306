import type { ContentBlock, SessionUpdate, StopReason, ToolCallContent, ToolCallLocation, ToolCallUpdate, ToolKind } from "@agentclientprotocol/sdk";
import type { EventOf, KeenEvent, ToolKind as KeenToolKind } from "../../protocol/events.js";
import { nestedIn } from "../../protocol/kinds.js";
import type { ImageMediaType } from "../../protocol/messages.js";

/*
 * Keen events → ACP `session/update` payloads, and ACP prompts → Keen text.
 * Pure functions: the live stream and a replayed history go through the same
 * ones, so a loaded session looks as it did live.
 */

/** How a client shows a tool call: a title, an icon (kind) and the files it touches. */
export interface ToolView {
  title: string;
  kind: ToolKind;
  locations: ToolCallLocation[];
}

// Tool output beyond this is cut for the client (the model got the whole result).
const TEXT_MAX_CHARS = 100_000;
const TITLE_MAX_CHARS = 120;

// Keen's tool kinds as ACP's (which picks the client's icon).
const ACP_KINDS: Record<KeenToolKind, ToolKind> = {
  read: "read", search: "search", edit: "edit", exec: "execute", network: "fetch", other: "other",
};

/**
 * Title, kind and locations of a call, as its event describes it (the tool's own `title`,
 * `tool_kind` and `locations`); an event without them (an unknown tool, a session stored
 * before tools described their calls) shows the tool's name as `other`.
 */
export function toolView(event: Pick<EventOf<"tool-use">, "tool_name" | "tool_kind" | "title" | "locations">): ToolView {
  return {
    title: short(event.title ?? event.tool_name),
    kind: event.tool_kind ? ACP_KINDS[event.tool_kind] : "other",
    locations: (event.locations ?? []).map((l) => ({ path: l.path, ...(l.line !== undefined ? { line: l.line } : {}) })),
  };
}

/** The `tool_call` that announces a call (pending until it starts or is refused). */
export function toolCallStarted(event: EventOf<"tool-use">): SessionUpdate {
  const view = toolView(event);
  return {
    sessionUpdate: "tool_call", toolCallId: event.tool_call_id, name: event.tool_name, status: "pending",
    title: view.title, kind: view.kind, locations: view.locations, rawInput: parseInput(event.input),
  };
}

/**
 * The tool call a permission request shows: what would run, and for writes and edits the
 * change it would make, as the finished call will show it (a `diff` item with the whole old
 * and new text; the unified diff as text when they were too large to send).
 */
export function permissionToolCall(event: EventOf<"permission-request">): ToolCallUpdate {
  const view = toolView(event);
  const content: ToolCallContent[] | undefined = event.path && event.new_text !== undefined
    ? [{ type: "diff", path: event.path, oldText: event.old_text ?? null, newText: event.new_text }]
    : event.diff ? [text(fenced(event.diff, "diff"))] : undefined;
  return {
    toolCallId: event.tool_call_id, name: event.tool_name, status: "pending", title: view.title, kind: view.kind, locations: view.locations,
    ...(content ? { content } : {}),
  };
}

/** A running call's output so far: the bounded tail the engine keeps, replacing the previous one. */
export function toolCallProgress(event: EventOf<"tool-update">): SessionUpdate {
  return { sessionUpdate: "tool_call_update", toolCallId: event.tool_call_id, status: "in_progress", content: [text(fenced(event.tail))] };
}

/**
 * A finished call: `failed` or `completed`, with a `diff` item for writes and
 * edits whose details carry the whole old and new text, else the unified diff
 * or the output as text.
 */
export function toolCallFinished(event: EventOf<"tool-result">): SessionUpdate {
  return { sessionUpdate: "tool_call_update", toolCallId: event.tool_call_id, status: event.is_error ? "failed" : "completed", content: resultContent(event) };
}

function resultContent(event: EventOf<"tool-result">): ToolCallContent[] {
  if (event.is_error) return [text(cut(event.result))];
  const details = event.details ?? {};
  if (typeof details.path === "string" && typeof details.new_text === "string") {
    const oldText = typeof details.old_text === "string" ? details.old_text : null;
    return [{ type: "diff", path: details.path, oldText, newText: details.new_text }];
  }
  if (typeof details.diff === "string" && details.diff) return [text(fenced(details.diff, "diff"))];
  return event.result ? [text(fenced(event.result))] : [];
}

/**
 * A background job (bash `background: true`) as a tool call of its own, beside the bash call that
 * started it (which completes at once): kind `execute`, titled with its command, `in_progress` while it
 * runs; when it ends, `completed` (exit 0, or killed: by the model's job_kill, the user or the session's
 * end, which is how a dev server is meant to stop) or `failed` (a non-zero exit). `announced`: the client
 * was sent its start; a job it never heard of (its start went to no client) arrives whole, already ended.
 * Its id is `job:<job_id>`, apart from the model's call ids.
 */
export function jobUpdate(event: EventOf<"job">, announced: boolean): SessionUpdate {
  const toolCallId = `job:${event.job_id}`;
  if (event.state === "running") {
    const said = `${event.job_id}${event.pid ? ` (pid ${event.pid})` : ""} runs in the background; the model reads its output with job_output.`;
    return { sessionUpdate: "tool_call", toolCallId, status: "in_progress", ...jobView(event), content: [text(said)] };
  }
  const status = event.state === "exited" && event.exit_code !== 0 ? "failed" : "completed";
  const said = event.state === "killed" ? `${event.job_id} was killed.` : `${event.job_id} exited with code ${event.exit_code ?? "?"}.`;
  return announced
    ? { sessionUpdate: "tool_call_update", toolCallId, status, content: [text(said)] }
    : { sessionUpdate: "tool_call", toolCallId, status, ...jobView(event), content: [text(said)] };
}

function jobView(event: EventOf<"job">) {
  return { title: short(`${event.command.split("\n")[0]!.trim()} (background ${event.job_id})`), kind: "execute" as const, rawInput: { command: event.command, background: true } };
}

/** The updates that show one stored event of a session's history (`session/load`, or turns another process appended). */
export function replayUpdates(event: KeenEvent): SessionUpdate[] {
  // A subagent's text is not the agent's message (its answer is its task call's result); its tool calls show.
  if (nestedIn(event) && (event.kind === "text" || event.kind === "thinking")) return [];
  switch (event.kind) {
    case "text":
      return [{ sessionUpdate: event.role === "user" ? "user_message_chunk" : "agent_message_chunk", content: { type: "text", text: event.content } }];
    case "thinking":
      return [{ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: event.content } }];
    case "tool-use":
      return [toolCallStarted(event)];
    case "tool-result":
      return [toolCallFinished(event)];
    case "plan-update":
      return [planUpdate(event)];
    default:
      // Tool memory, errors and everything internal stay out of the client's transcript; so do jobs (`job`):
      // a job of an earlier process is gone, and replayed as running it would spin in the client for ever.
      return [];
  }
}

/**
 * ACP's `plan` update: the whole plan, replacing the client's (as `plan-update` replaces Keen's).
 * ACP requires a priority; an item the model gave none is `medium`.
 */
export function planUpdate(event: EventOf<"plan-update">): SessionUpdate {
  return {
    sessionUpdate: "plan",
    entries: event.entries.map((e) => ({ content: e.content, status: e.status, priority: e.priority ?? "medium" })),
  };
}

/**
 * The ACP stop reason of a finished turn, from its `result`. A turn the
 * client cancelled is `cancelled` whatever the loop made of the abort; a
 * failure (provider error, timeout) is `{ error }` for a JSON-RPC error.
 */
export function stopReasonOf(result: Pick<EventOf<"result">, "status" | "stop_reason" | "errors"> | undefined, cancelled: boolean): StopReason | { error: string } {
  if (cancelled || result?.status === "interrupted") return "cancelled";
  if (!result) return { error: "the turn ended without a result" };
  if (result.stop_reason === "refusal") return "refusal";
  if (result.status === "error") return { error: result.errors.at(-1) ?? "the turn failed" };
  if (result.status === "max_turns") return "max_turn_requests";
  if (result.stop_reason === "max_tokens") return "max_tokens";
  return "end_turn";
}

/**
 * The prompt as Keen's text. Text is taken as is; a resource link becomes a
 * line naming the file (the model reads it with its tools); an embedded text
 * resource (what an editor attaches with @) is inlined with its URI. Images
 * are taken by promptImages; audio and binary resources are not advertised, so
 * they are refused.
 */
export function promptText(blocks: ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    if (block.type === "image") continue;
    if (block.type === "text") parts.push(block.text);
    else if (block.type === "resource_link") parts.push(`[${block.name}](${pathOf(block.uri)})`);
    else if (block.type === "resource" && "text" in block.resource) {
      parts.push(`<context uri="${pathOf(block.resource.uri)}">\n${block.resource.text}\n</context>`);
    } else throw new UnsupportedContentError(block.type === "resource" ? "binary resource" : block.type);
  }
  return parts.join("\n\n");
}

/**
 * The prompt's image blocks as the `prompt` command's images (base64 and its type; the engine checks both, caps
 * and downscales, and refuses what it cannot send with `bad_image`).
 */
export function promptImages(blocks: ContentBlock[]): { data: string; media_type: ImageMediaType }[] {
  return blocks.flatMap((b) => (b.type === "image" ? [{ data: b.data, media_type: b.mimeType as ImageMediaType }] : []));
}

/** A prompt block Keen did not advertise (image, audio, a binary resource). */
export class UnsupportedContentError extends Error {
  constructor(readonly what: string) {
    super(`Keen does not accept ${what} content in prompts`);
  }
}

function pathOf(uri: string): string {
  if (!uri.startsWith("file://")) return uri;
  try {
    return decodeURIComponent(new URL(uri).pathname);
  } catch {
    return uri;
  }
}

function parseInput(input: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(input);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function text(value: string): ToolCallContent {
  return { type: "content", content: { type: "text", text: value } };
}

/** A markdown code block whose fence no run of backticks in `value` can close. */
export function fenced(value: string, lang = ""): string {
  const longest = Math.max(2, ...[...value.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${lang}\n${cut(value).replace(/\n$/, "")}\n${fence}`;
}

function cut(value: string): string {
  return value.length > TEXT_MAX_CHARS ? `${value.slice(0, TEXT_MAX_CHARS)}\n[… ${value.length - TEXT_MAX_CHARS} more characters]` : value;
}

function short(value: string): string {
  const line = value.split("\n")[0]!.trim();
  return line.length > TITLE_MAX_CHARS || value.includes("\n") ? `${line.slice(0, TITLE_MAX_CHARS - 1)}…` : line;
}
