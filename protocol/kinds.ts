import type { KeenEvent } from "./events.js";

/*
 * The protocol's runtime constants, apart from its zod schemas: a `keen run`
 * needs these, not the schemas (constructing them costs ~15 ms of start-up),
 * so the run path imports this module and never evaluates events.ts. Only
 * types come from events.ts, so there is no import cycle at run time or in
 * the module graph's values.
 */

/** Version of the JSON-lines protocol; bumped on incompatible changes. */
export const PROTOCOL_VERSION = 1;

/**
 * How an event kind travels:
 * - `complete`: printed in every JSONL stream, stored, replayed by `sessions show --jsonl`;
 * - `run`: printed in every JSONL stream, not replayed (session-start, retry, result);
 * - `delta`: printed only with `--stream-deltas` (and by `keen stdio`), never stored;
 * - `control`: printed only by the two-way protocol (`keen stdio`), never stored;
 * - `internal`: stored or in-process only, never printed.
 */
export type KindClass = "complete" | "run" | "delta" | "control" | "internal";

/** The one table of kinds; the type checker holds it to the event union. */
export const KIND_CLASS = {
  "session-start": "run",
  text: "complete",
  thinking: "complete",
  "tool-use": "complete",
  "tool-result": "complete",
  memory: "complete",
  retry: "run",
  error: "complete",
  result: "run",
  "text-delta": "delta",
  "thinking-start": "delta",
  "thinking-delta": "delta",
  "thinking-end": "delta",
  "content-end": "delta",
  "tool-update": "delta",
  "tool-start": "delta",
  "permission-request": "control",
  response: "control",
  compaction: "complete",
  "mcp-server": "run",
  "shell-start": "delta",
  "shell-update": "delta",
  shell: "complete",
  "plan-update": "complete",
  "skill-loaded": "complete",
  hook: "complete",
  rewind: "complete",
  job: "run",
  "user-message": "internal",
  "assistant-message": "internal",
  "turn-end": "internal",
  "prompt-injection": "internal",
  "permission-rule": "internal",
  "context-replacement": "internal",
} as const satisfies Record<KeenEvent["kind"], KindClass>;

/** The class of a kind; an unknown kind (from a newer store) counts as internal and is never printed. */
export function kindClass(kind: string): KindClass {
  return (KIND_CLASS as Record<string, KindClass>)[kind] ?? "internal";
}

/** Kinds the store keeps: everything but deltas and control lines. */
export function isStored(kind: string): boolean {
  const c = kindClass(kind);
  return c !== "delta" && c !== "control";
}

/** Kinds a replay of a stored session writes (`sessions show --jsonl`, a resumed UI's history). */
export function isReplayed(kind: string): boolean {
  return kindClass(kind) === "complete";
}

/** The `task` call a subagent's event belongs to (its `parent_tool_call_id`); undefined for the session's own events. */
export function nestedIn(event: KeenEvent): string | undefined {
  return "parent_tool_call_id" in event ? event.parent_tool_call_id : undefined;
}
