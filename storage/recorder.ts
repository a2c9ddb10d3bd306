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

/**
 * Appends completed events of one session as they happen. Deltas and tool
 * progress are not stored (the complete entries carry the same content).
 * Contract: never blocks the loop — events queue while one batch is written,
 * and the next batch takes everything queued; order is kept. The one
 * exception is a turn's `user-message`: its emit waits until it is stored
 * (a few ms, before the model request), because a process killed before
 * that write would lose the whole turn on resume, not just in-flight text.
 */
export function createRecorder(store: SessionStore, sessionId: string): Recorder {
  let queue: KeenEvent[] = [];
  let writing: Promise<void> | undefined;
  let failure: unknown;
  const pump = async () => {
    // Start after the rest of this turn of the event loop: events emitted together (a run's session-start
    // and its user-message) reach the disk in one write, one open of the session's database instead of one each.
    await new Promise((resolve) => setImmediate(resolve));
    while (queue.length) {
      const batch = queue;
      queue = [];
      try {
        await store.append(sessionId, batch);
      } catch (error) {
        failure ??= error;
      }
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
      // Write errors surface through flush(); here only the wait matters.
      if (event.kind === "user-message") return settled();
    },
    async flush() {
      await settled();
      if (failure) throw failure;
    },
  };
}
