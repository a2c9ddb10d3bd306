import { test } from "node:test";
import assert from "node:assert/strict";
import type { EventDraft } from "../../protocol/events.js";
import { runTurn, type TurnOptions } from "../../app/agent/turn.js";
import type { Tool } from "../../app/tools/tool.js";
import { approveAll } from "../fakes/approve-all.js";
import { FakeProvider, type FakeStep } from "../fakes/fake-provider.js";

const echoTool: Tool = {
  definition: { name: "echo", description: "echo", inputSchema: { type: "object" } },
  async run(input) {
    return { content: `echo ${JSON.stringify(input)}`, is_error: false };
  },
};
const throwingTool: Tool = {
  definition: { name: "boom", description: "throws", inputSchema: { type: "object" } },
  async run() {
    throw new Error("kaput");
  },
};

async function turn(script: FakeStep[], extra: Partial<TurnOptions> = {}) {
  const provider = new FakeProvider(script);
  const events: EventDraft[] = [];
  const outcome = await runTurn({
    sessionId: "s1", turnId: "t1", provider, tools: [echoTool, throwingTool], system: "sys", history: [],
    user: { role: "user", content: [{ type: "text", text: "hi" }], headless: true },
    emit: async (e) => void events.push(e), requester: approveAll,
    retry: { maxRetries: 2, maxWaitMs: 1000, idleTimeoutMs: 200, baseDelayMs: 1 },
    signal: new AbortController().signal, sleep: async () => {}, ...extra,
  });
  return { outcome, events, kinds: events.map((e) => e.kind), provider };
}

test("a text-only turn emits the whole sequence in order", async () => {
  const { outcome, kinds } = await turn([{ deltas: ["Hel", "lo"] }]);
  assert.deepEqual(kinds, ["user-message", "text", "text-delta", "text-delta", "content-end", "text", "assistant-message", "turn-end"]);
  assert.equal(outcome.text, "Hello");
  assert.equal(outcome.status, "success");
  assert.equal(outcome.steps, 1);
});

test("tool calls run in order, a throwing or unknown tool becomes an error result and the loop goes on", async () => {
  const { outcome, events, provider } = await turn([
    { toolCalls: [{ id: "a", name: "echo", input: { x: 1 } }, { id: "b", name: "boom", input: {} }, { id: "c", name: "nope", input: {} }] },
    { text: "done" },
  ]);
  const results = events.filter((e) => e.kind === "tool-result");
  assert.deepEqual(results.map((r) => [r.tool_call_id, r.is_error]), [["a", false], ["b", true], ["c", true]]);
  assert.match((results[1] as { result: string }).result, /kaput/);
  assert.match((results[2] as { result: string }).result, /Unknown tool "nope"/);
  assert.equal(outcome.text, "done");
  assert.equal(outcome.steps, 2);
  assert.equal(outcome.usage.total_tokens, 30);
  const second = provider.requests[1]!.messages;
  assert.equal(second.length, 3);
  assert.equal(second[2]!.content.length, 3);
});

test("a retried attempt's deltas carry its attempt and never reach the complete text", async () => {
  const { outcome, events } = await turn([
    { fail: { message: "overloaded", retryable: true }, deltas: ["bad ", "text"] },
    { deltas: ["good"] },
  ]);
  const deltas = events.filter((e) => e.kind === "text-delta") as { attempt: number; delta: string }[];
  assert.deepEqual(deltas.map((d) => [d.attempt, d.delta]), [[1, "bad "], [1, "text"], [2, "good"]]);
  const retry = events.find((e) => e.kind === "retry") as { attempt: number };
  assert.equal(retry.attempt, 2);
  const texts = events.filter((e) => e.kind === "text" && e.role === "assistant") as { content: string }[];
  assert.deepEqual(texts.map((t) => t.content), ["good"]);
  assert.equal(outcome.text, "good");
});

test("a non-retryable failure ends the turn as error and keeps the partial text", async () => {
  const { outcome, events } = await turn([{ fail: { message: "bad request", retryable: false }, deltas: ["partial"] }]);
  assert.equal(outcome.status, "error");
  assert.deepEqual(outcome.errors, ["bad request"]);
  const stored = events.find((e) => e.kind === "assistant-message") as { message: { content: { text: string }[] } };
  assert.equal(stored.message.content[0]!.text, "partial");
  assert.equal(events.at(-1)!.kind, "turn-end");
});

test("a stalled stream is aborted by the idle watchdog and retried", async () => {
  const { outcome, events } = await turn([{ hang: true }, { text: "recovered" }]);
  assert.equal(outcome.text, "recovered");
  const retry = events.find((e) => e.kind === "retry") as { reason: string };
  assert.match(retry.reason, /stalled/);
});

test("retries stop when the budget is spent", async () => {
  const fail = { fail: { message: "503", retryable: true } };
  const { outcome, kinds } = await turn([fail, fail, fail]);
  assert.equal(outcome.status, "error");
  assert.equal(kinds.filter((k) => k === "retry").length, 2);
});

test("aborting the run interrupts the turn", async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 20);
  const { outcome, events } = await turn([{ hang: true, deltas: ["so far"] }], {
    signal: controller.signal, retry: { maxRetries: 2, maxWaitMs: 1000, idleTimeoutMs: 10_000, baseDelayMs: 1 },
  });
  assert.equal(outcome.status, "interrupted");
  const end = events.at(-1) as { kind: string; status: string };
  assert.deepEqual([end.kind, end.status], ["turn-end", "interrupted"]);
});

test("an interrupt keeps what streamed: the answer, a complete text marked interrupted, and the stored assistant message", async () => {
  const controller = new AbortController();
  const events: EventDraft[] = [];
  // Interrupted once the second delta is out: the moment is an event, not a timer.
  const emit = async (e: EventDraft) => {
    events.push(e);
    if (e.kind === "text-delta" && e.delta === "so far") controller.abort();
  };
  const { outcome } = await turn([{ hang: true, deltas: ["Said ", "so far"] }], { signal: controller.signal, emit });
  assert.deepEqual([outcome.status, outcome.text], ["interrupted", "Said so far"]);
  assert.deepEqual(events.filter((e) => e.kind !== "user-message").map((e) => {
    const { kind, ...rest } = e as Record<string, unknown>;
    return kind === "assistant-message" ? [kind, rest.message] : kind === "turn-end" ? [kind, rest.status] : [kind, rest.delta ?? rest.content, rest.interrupted];
  }), [
    ["text", "hi", undefined],
    ["text-delta", "Said ", undefined],
    ["text-delta", "so far", undefined],
    ["content-end", undefined, undefined],
    ["text", "Said so far", true],
    ["assistant-message", { role: "assistant", content: [{ type: "text", text: "Said so far" }] }],
    ["turn-end", "interrupted"],
  ]);
});

test("attempts are numbered across the turn: a step after a retried one keeps the retry's number", async () => {
  const { events } = await turn([
    { fail: { message: "overloaded", retryable: true }, deltas: ["lost"] },
    { toolCalls: [{ id: "a", name: "echo", input: {} }], deltas: ["first"] },
    { deltas: ["second"] },
  ]);
  const numbered = events.flatMap((e) => (e.kind === "text-delta" || e.kind === "retry" ? [[e.kind, e.attempt]] : []));
  assert.deepEqual(numbered, [["text-delta", 1], ["retry", 2], ["text-delta", 2], ["text-delta", 2]]);
});

test("a tool result says how long the tool ran, from its tool-start (a permission wait is not counted); a call never started has no time and says it did not run", async () => {
  const at = new Map<EventDraft, number>();
  const events: EventDraft[] = [];
  const requester = {
    async request() {
      await new Promise((r) => setTimeout(r, 30)); // the user thinking: must not count as the tool's time
      return { allow: true as const };
    },
  };
  await turn([{ toolCalls: [{ id: "a", name: "echo", input: {} }, { id: "b", name: "nope", input: {} }] }, { text: "done" }], {
    requester: requester as never,
    emit: async (e) => {
      events.push(e);
      at.set(e, Date.now());
    },
  });
  const start = events.find((e) => e.kind === "tool-start")!;
  const [ran, unknown] = events.filter((e): e is Extract<EventDraft, { kind: "tool-result" }> => e.kind === "tool-result");
  assert.ok(Number.isInteger(ran!.duration_ms) && ran!.duration_ms! >= 0);
  assert.ok(ran!.duration_ms! <= at.get(ran!)! - at.get(start)!, "measured between tool-start and the result");
  assert.equal(unknown!.duration_ms, undefined);
  // Only the call that never started is marked so: a UI says it did not run rather than count its reason as output.
  assert.equal(unknown!.not_run, true);
  assert.equal(ran!.not_run, undefined);
});

test("tools warm once a turn, after the answer's first event has gone out, never ahead of it", async () => {
  let kindsAtWarm: string[] | undefined;
  let warms = 0;
  const events: EventDraft[] = [];
  const warming: Tool = { ...echoTool, warm: () => { warms++; kindsAtWarm = events.map((e) => e.kind); } };
  // The answer's first event waits for the test: the warm-up must not start while the request is answered.
  let release!: () => void;
  const answered = new Promise<void>((done) => (release = done));
  const fake = new FakeProvider([{ toolCalls: [{ id: "a", name: "echo", input: {} }] }, { deltas: ["Hel", "lo"] }]);
  const provider = { ...fake, providerId: fake.providerId, model: fake.model, async *stream(request: any, signal: AbortSignal) {
    await answered;
    yield* fake.stream(request, signal);
  } } as unknown as FakeProvider;
  const turning = runTurn({
    sessionId: "s1", turnId: "t1", provider, tools: [warming], system: "sys", history: [],
    user: { role: "user", content: [{ type: "text", text: "hi" }], headless: true },
    emit: async (e) => void events.push(e), requester: approveAll,
    retry: { maxRetries: 2, maxWaitMs: 1000, idleTimeoutMs: 60_000, baseDelayMs: 1 },
    signal: new AbortController().signal, sleep: async () => {},
  });
  for (let i = 0; i < 5; i++) await new Promise((done) => setImmediate(done));
  assert.equal(warms, 0, "nothing warms while the first request waits for its answer's first event");
  release();
  await turning;
  await new Promise((done) => setImmediate(done));
  assert.equal(warms, 1, "once for the turn, not per step");
  assert.ok(kindsAtWarm!.includes("tool-use"), `warmed after the answer's first event: ${kindsAtWarm}`);
});

test("a streaming answer is never held up by the warm-up: tools warm when its tool calls are out, or when it pauses", async () => {
  const run = async (steps: ConstructorParameters<typeof FakeProvider>[0], warmAfterMs: number) => {
    const events: EventDraft[] = [];
    const warmedAt: number[] = [];
    const warming: Tool = { ...echoTool, warm: () => void warmedAt.push(events.length) };
    // Each event a macrotask after the one before, as from a socket: a warm-up started mid-stream would run between them.
    const fake = new FakeProvider(steps);
    const provider = { ...fake, providerId: fake.providerId, model: fake.model, async *stream(request: any, signal: AbortSignal) {
      for await (const event of fake.stream(request, signal)) {
        await new Promise((done) => setImmediate(done));
        yield event;
      }
    } } as unknown as FakeProvider;
    const turning = runTurn({
      sessionId: "s1", turnId: "t1", provider, tools: [warming], system: "sys", history: [],
      user: { role: "user", content: [{ type: "text", text: "hi" }], headless: true },
      emit: async (e) => void events.push(e), requester: approveAll, warmAfterMs,
      retry: { maxRetries: 2, maxWaitMs: 1000, idleTimeoutMs: 60_000, baseDelayMs: 1 },
      signal: new AbortController().signal, sleep: async () => {},
    });
    await turning;
    await new Promise((done) => setTimeout(done, warmAfterMs === 60_000 ? 0 : 3 * warmAfterMs));
    return { events, warmedAt };
  };
  const deltas = Array.from({ length: 50 }, (_, i) => `w${i} `);
  // Text, then a call: the warm-up waits for the call, not the first delta (no timer can fire: 60 s).
  const withCall = await run([{ deltas, toolCalls: [{ id: "a", name: "echo", input: {} }] }, { text: "done" }], 60_000);
  assert.equal(withCall.warmedAt.length, 1);
  const before = withCall.events.slice(0, withCall.warmedAt[0]).map((e) => e.kind);
  assert.ok(before.includes("tool-use"), `warmed once the call was out, not mid-stream: after ${before.filter((k) => k === "text-delta").length} deltas`);
  // A text answer streamed without a pause warms nothing while it streams.
  const textOnly = await run([{ deltas }], 60_000);
  assert.deepEqual(textOnly.warmedAt, []);
  // Once it has ended (a pause as long as the wait), a long-lived session warms for its next turn.
  const paused = await run([{ deltas: ["a", "b"] }], 20);
  assert.deepEqual(paused.warmedAt, [paused.events.length]);
});
