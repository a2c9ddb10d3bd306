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
 * Kinds whose emit waits until they are stored. Each marks a point after which
 * something happens that must not be lost: a request is sent (`user-message`,
 * `assistant-message` of a step answered by a follow-up, `tool-result`), a
 * tool runs (`tool-use`, `assistant-message`), or the verdict is made
 * (`turn-end`). Since the recorder is the bus's first subscriber, these are
 * also never printed before they are stored.
 */
const WAIT_FOR: ReadonlySet<string> = new Set(["user-message", "tool-use", "tool-result", "assistant-message", "turn-end"]);

/**
 * Appends completed events of one session as they happen. Deltas, tool
 * progress and control lines are not stored (the complete entries carry the
 * same content) and pass without waiting. Contract: order is kept; events
 * queue while one batch is written and the next batch takes everything
 * queued, so the events of one step (thinking, text, its tool calls) reach the
 * disk together. The emit of a kind in WAIT_FOR resolves once its batch was
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
      if (WAIT_FOR.has(event.kind)) return new Promise<void>((resolve) => waiters.push(resolve));
    },
    async flush() {
      await settled();
      if (failure !== undefined) throw failure;
    },
  };
}
