import type { Subscriber } from "../protocol/bus.js";
import type { KeenEvent } from "../protocol/events.js";
import { isStored } from "../protocol/kinds.js";
import type { SessionStore } from "./store.js";

/** The storage subscriber and a way to wait until everything is written. */
export interface Recorder {
  subscriber: Subscriber;
  /** Resolves when every recorded event is in the store; rejects with the first write error. */
  flush(): Promise<void>;
}

/** Options for `createRecorder`. */
export interface RecorderOptions {
  /**
   * Called once, with the first failed write, before any emit waiting on that
   * write resumes: the composition root aborts the turn here, so a tool whose
   * `tool-use` could not be stored never starts.
   */
  onFailure?: (error: unknown) => void;
}

/**
 * Whether the emit of `event` waits until it is stored. Each such event marks a
 * point after which something happens that must not be lost: a request is sent
 * (`user-message`, `tool-result`, the `assistant-message` of a step without
 * tool calls, which a follow-up request may answer), a tool runs (`tool-use`),
 * or the verdict is made (`turn-end`). The `assistant-message` of a step with
 * tool calls does not wait: its tool-uses were stored before it, and its
 * tool-results, which wait, are written after it. Since the recorder is the
 * bus's first subscriber, a waiting event is also never printed before it is stored.
 */
function waits(event: KeenEvent): boolean {
  switch (event.kind) {
    case "user-message":
    case "tool-use":
    case "tool-result":
    case "turn-end":
      return true;
    case "assistant-message":
      return !event.message.content.some((block) => block.type === "tool_call");
    default:
      return false;
  }
}

/**
 * Appends completed events of one session as they happen. Deltas, tool
 * progress and control lines are not stored (the complete entries carry the
 * same content) and pass without waiting. Contract: order is kept; events
 * queue while one batch is written and the next batch takes everything
 * queued, so the events of one step (thinking, text, its tool calls) reach the
 * disk together. The emit of an event that `waits` resolves once its batch was
 * written or failed — so `kill -9` at any moment loses at most text still
 * streaming, never a tool call or result. A failed write is reported once
 * through `onFailure` and by `flush`; later events are still attempted.
 */
export function createRecorder(store: SessionStore, sessionId: string, options: RecorderOptions = {}): Recorder {
  let queue: KeenEvent[] = [];
  let waiters: Array<() => void> = [];
  let writing: Promise<void> | undefined;
  let failure: unknown;
  const pump = async () => {
    // Start after the rest of this turn of the event loop: events emitted together (a run's session-start
    // and its user-message) reach the disk in one write, one open of the session's database instead of one each.
    await new Promise((resolve) => setImmediate(resolve));
    while (queue.length) {
      const batch = queue;
      const done = waiters;
      queue = [];
      waiters = [];
      try {
        await store.append(sessionId, batch);
      } catch (error) {
        if (failure === undefined) {
          failure = error;
          options.onFailure?.(error);
        }
      }
      for (const resume of done) resume();
    }
    writing = undefined;
  };
  const settled = async () => {
    while (writing) await writing;
  };
  return {
    subscriber(event) {
      if (!isStored(event.kind) || event.replay) return;
      queue.push(event);
      writing ??= pump();
      // Write errors surface through onFailure and flush(); here only the wait matters.
      if (waits(event)) return new Promise<void>((resolve) => waiters.push(resolve));
    },
    async flush() {
      await settled();
      if (failure !== undefined) throw failure;
    },
  };
}
