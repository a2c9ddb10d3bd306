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

test("a step's text and thinking queue without waiting; its tool-use waits for the one write that carries them all", async () => {
  const { store, appends, finishAll } = fakeStore();
  const recorder = createRecorder(store, "s");
  assert.equal(recorder.subscriber(event("thinking")), undefined);
  assert.equal(recorder.subscriber(event("text-delta", { delta: "b" })), undefined, "deltas are not stored");
  assert.equal(recorder.subscriber(event("text")), undefined);
  let stored = false;
  const toolUse = Promise.resolve(recorder.subscriber(event("tool-use"))).then(() => (stored = true));
  await tick();
  await tick();
  assert.deepEqual(appends, [["thinking", "text", "tool-use"]]);
  assert.equal(stored, false, "the tool may not start before its tool-use is stored");
  finishAll();
  await toolUse;
});

test("every kind that precedes a tool run, a request or the verdict waits; events queued during a write go in the next one, in order", async () => {
  const { store, appends, finishAll } = fakeStore();
  const recorder = createRecorder(store, "s");
  const textOnly = { message: { role: "assistant", content: [{ type: "text", text: "answer" }] } };
  const withCalls = { message: { role: "assistant", content: [{ type: "tool_call", id: "c", name: "bash", input: {} }] } };
  const waits = ["user-message", "tool-use", "tool-result", "assistant-message", "turn-end"];
  for (const kind of waits) {
    const pending = recorder.subscriber(event(kind, kind === "assistant-message" ? textOnly : {}));
    assert.ok(pending instanceof Promise, `${kind} waits`);
  }
  await tick();
  for (const kind of ["session-start", "text", "thinking", "memory", "error", "retry", "prompt-injection", "result"]) {
    assert.equal(recorder.subscriber(event(kind)), undefined, `${kind} does not wait`);
  }
  // Its tool-uses were stored before it, and its tool-results (which wait) are written after it.
  assert.equal(recorder.subscriber(event("assistant-message", withCalls)), undefined, "a step message with tool calls does not wait");
  assert.equal(recorder.subscriber(event("permission-request")), undefined, "control lines are not stored");
  const flushed = recorder.flush();
  for (let i = 0; i < 5; i++) {
    finishAll();
    await tick();
  }
  await flushed;
  assert.deepEqual(appends, [
    waits,
    ["session-start", "text", "thinking", "memory", "error", "retry", "prompt-injection", "result", "assistant-message"],
  ]);
});

test("a failed write: onFailure once, before the waiting emit resumes; later events are still tried; flush rejects with the first error", async () => {
  const { store, appends, finishAll } = fakeStore(new Error("disk full"));
  const failures: string[] = [];
  const recorder = createRecorder(store, "s", { onFailure: (error) => failures.push(String(error)) });
  let seenAtResume: string[] | undefined;
  const toolUse = Promise.resolve(recorder.subscriber(event("tool-use"))).then(() => (seenAtResume = [...failures]));
  await tick();
  finishAll();
  await toolUse;
  assert.deepEqual(seenAtResume, ["Error: disk full"], "the failure is known before the tool could start");
  const result = recorder.subscriber(event("tool-result"));
  await tick();
  finishAll();
  await result;
  assert.deepEqual(appends, [["tool-use"], ["tool-result"]]);
  assert.deepEqual(failures, ["Error: disk full"]);
  await assert.rejects(recorder.flush(), /disk full/);
});
