import type { EventOf, KeenEvent } from "../protocol/events.js";
import type { Message } from "../protocol/messages.js";

type TurnStatus = EventOf<"turn-end">["status"];

interface Turn {
  /** Absent for a turn compacted while it ran: its user message is in the replacement or its summary. */
  user?: Message;
  texts: string[];
  status?: TurnStatus;
}

/** Closing lines for turns that did not finish normally; a killed process leaves no `turn-end`. */
const MARKERS: Partial<Record<TurnStatus | "missing", string>> = {
  error: "[turn error]",
  interrupted: "[turn interrupted]",
  missing: "[turn interrupted]",
};

/**
 * Placeholder for a finished turn whose steps held no text at all (only tool
 * calls): providers reject empty text blocks, and the result must still
 * alternate user/assistant.
 */
const NO_TEXT = "[no text]";

/**
 * The conversation to send with the next turn, from a session's stored events.
 * Contract: pure; the result alternates user/assistant and ends with an
 * assistant message. Per turn it keeps the user message as stored (with its
 * `headless` flag) and one assistant message: the text blocks of all steps,
 * raw (`<keen_memory>` blocks included) and joined with a blank line. Thinking
 * and tool calls are dropped — raw tool I/O is not replayed into later context.
 * A turn that failed, was interrupted or never ended is closed with a marker.
 * Rewound turns are left out (`rewoundEvents`).
 * A `context-replacement` (compaction) replaces everything before it with its
 * messages, sent as stored; a turn it happened in continues after them.
 */
export function projectConversation(stored: KeenEvent[]): Message[] {
  const events = rewoundEvents(stored);
  let turns = new Map<string, Turn>();
  let base: Message[] = [];
  for (const event of events) {
    if (event.kind === "context-replacement") {
      base = event.messages;
      turns = new Map();
      if (event.turn_id) turns.set(event.turn_id, { texts: [] });
    } else if (event.kind === "user-message") {
      if (!turns.has(event.turn_id)) turns.set(event.turn_id, { user: event.message, texts: [] });
    } else if (event.kind === "assistant-message") {
      // Steps of a turn whose user message was never stored cannot be placed: skip them.
      const turn = turns.get(event.turn_id);
      if (!turn) continue;
      for (const block of event.message.content) {
        if (block.type === "text" && block.text.trim() !== "") turn.texts.push(block.text);
      }
    } else if (event.kind === "turn-end") {
      const turn = turns.get(event.turn_id);
      if (turn && !turn.status) turn.status = event.status;
    }
  }

  const conversation: Message[] = [...base];
  const plan = latestPlan(events);
  for (const turn of turns.values()) {
    const marker = MARKERS[turn.status ?? "missing"];
    const parts = marker ? [...turn.texts, marker] : turn.texts;
    const text = parts.length > 0 ? parts.join("\n\n") : NO_TEXT;
    if (turn.user) conversation.push(turn.user);
    conversation.push({ role: "assistant", content: [{ type: "text", text }] });
  }
  // Tool calls are not replayed, so the model would lose the plan it wrote: its latest one closes the last answer.
  const last = conversation.at(-1);
  if (plan?.length && last?.role === "assistant" && last.content[0]?.type === "text") {
    conversation[conversation.length - 1] = { ...last, content: [{ type: "text", text: `${last.content[0].text}\n\n${planMarker(plan)}` }, ...last.content.slice(1)] };
  }
  return conversation;
}

/** The session's plan: the entries of its latest `plan-update` (undefined when it has none). */
export function latestPlan(events: KeenEvent[]): EventOf<"plan-update">["entries"] | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.kind === "plan-update") return event.entries;
  }
  return undefined;
}

const MARKS = { pending: "[ ]", in_progress: "[~]", completed: "[x]" } as const;

/** The plan as the model is reminded of it on later turns. */
function planMarker(plan: EventOf<"plan-update">["entries"]): string {
  return ["[plan, as last written with todo_write]", ...plan.map((e) => `${MARKS[e.status]} ${e.content}`)].join("\n");
}

/**
 * A session's current history: its stored events without the turns a `rewind` (with `conversation`) went back
 * over. Contract: pure; a rewind to prompt `to` drops everything from that prompt's `user-message` on (in the
 * history as it was then, so rewinds stack), except standing permission answers, which are the user's and not the
 * conversation's; the `rewind` event itself stays (a client that applies it to a replay finds nothing left to cut).
 * A window of a log (from a compaction on) counts prompts from its start: a caller with a rewind in the window reads
 * the whole log (engine-session.ts).
 */
export function rewoundEvents(events: KeenEvent[]): KeenEvent[] {
  if (!events.some((e) => e.kind === "rewind" && e.conversation)) return events;
  const kept: KeenEvent[] = [];
  /** Where each prompt of the current history starts in `kept`. */
  const starts: number[] = [];
  const turns = new Set<string>();
  for (const event of events) {
    if (event.kind === "rewind" && event.conversation) {
      const at = starts[event.to - 1];
      if (at !== undefined) {
        const dropped = kept.splice(at);
        kept.push(...dropped.filter((e) => e.kind === "permission-rule"));
        starts.length = event.to - 1;
      }
    } else if (event.kind === "user-message" && !turns.has(event.turn_id)) {
      turns.add(event.turn_id);
      starts.push(kept.length);
    }
    kept.push(event);
  }
  return kept;
}
