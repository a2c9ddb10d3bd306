import assert from "node:assert/strict";
import { test } from "node:test";
import type { KeenEvent } from "../../protocol/events.js";
import { createRecorder } from "../../storage/recorder.js";
import type { SessionStore } from "../../storage/store.js";

/** A store whose appends are recorded and finish when the test says so. */
function fakeStore(fail?: Error) {
  const appends: string[][] = [];
  const pending: Array<() => void> = [];
  const store = {
    append: (_id: string, events: KeenEvent[]) => {
      appends.push(events.map((e) => e.kind));
      return new Promise<void>((resolve, reject) => pending.push(() => (fail ? reject(fail) : resolve())));
    },
  } as unknown as SessionStore;
  const finishAll = () => pending.splice(0).forEach((done) => done());
  return { store, appends, finishAll };
}

const event = (kind: string, extra: Record<string, unknown> = {}) => ({ kind, conversation_id: "s", ts: 0, ...extra }) as unknown as KeenEvent;
const tick = () => new Promise((resolve) => setImmediate(resolve));

test("a run's session-start and user-message go to the store in one write, and the user-message waits for it", async () => {
  const { store, appends, finishAll } = fakeStore();
  const recorder = createRecorder(store, "s");
  await recorder.subscriber(event("session-start"));
  let stored = false;
  const waiting = Promise.resolve(recorder.subscriber(event("user-message"))).then(() => (stored = true));
  await tick();
  await tick();
  assert.deepEqual(appends, [["session-start", "user-message"]]);
  assert.equal(stored, false, "the user-message is not acknowledged before its write finishes");
  finishAll();
  await waiting;
  assert.equal(stored, true);
});

test("deltas are not stored; events queued during a write go in the next one, in order; flush waits for all", async () => {
  const { store, appends, finishAll } = fakeStore();
  const recorder = createRecorder(store, "s");
  await recorder.subscriber(event("text", { content: "a" }));
  await tick();
  await recorder.subscriber(event("text-delta", { delta: "b" }));
  await recorder.subscriber(event("tool-use"));
  await recorder.subscriber(event("tool-result"));
  const flushed = recorder.flush();
  for (let i = 0; i < 5; i++) {
    finishAll();
    await tick();
  }
  await flushed;
  assert.deepEqual(appends, [["text"], ["tool-use", "tool-result"]]);
});

test("flush rejects with the first write error", async () => {
  const { store, finishAll } = fakeStore(new Error("disk full"));
  const recorder = createRecorder(store, "s");
  await recorder.subscriber(event("text"));
  const flushed = assert.rejects(recorder.flush(), /disk full/);
  for (let i = 0; i < 3; i++) {
    finishAll();
    await tick();
  }
  await flushed;
});
