import type { InternalEvent, KeenEvent } from "./events.js";

/*
 * The protocol's runtime constants, apart from its zod schemas: a `keen run`
 * needs these, not the schemas (constructing them costs ~15 ms of start-up),
 * so the run path imports this module and never evaluates events.ts.
 * events.ts re-exports everything here.
 */

/** Version of the JSON-lines protocol; bumped on incompatible changes. */
export const PROTOCOL_VERSION = 1;

/** Kinds printed only with `--stream-deltas`. */
export const DELTA_KINDS = new Set<string>([
  "text-delta", "thinking-start", "thinking-delta", "thinking-end", "content-end", "tool-update",
]);

const internalKinds = new Set<string>(["user-message", "assistant-message", "turn-end", "prompt-injection"]);

/** Events for storage and in-process use, never printed. */
export function isInternal(event: KeenEvent): event is InternalEvent {
  return internalKinds.has(event.kind);
}
