import { after, test } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../temp.js";
import { EventBus } from "../../protocol/bus.js";
import type { Command } from "../../protocol/commands.js";
import type { EventOf, KeenEvent } from "../../protocol/events.js";
import type { Message } from "../../protocol/messages.js";
import type { Provider, ProviderRequest } from "../../protocol/provider.js";
import { createCompactionPolicy, cutIndex, SUMMARY_HEAD, type CompactionSettings } from "../../app/agent/compaction.js";
import { createSessionEngine, type EngineSetup } from "../../app/agent/engine.js";
import type { Tool } from "../../app/tools/tool.js";
import { openStore } from "../../storage/level-store.js";
import { projectConversation } from "../../storage/projection.js";
import type { SessionStore } from "../../storage/store.js";
import { FakeProvider, type FakeStep } from "../fakes/fake-provider.js";

const root = makeTempDir("keen-compaction-");
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

const echo: Tool = {
  definition: { name: "echo", description: "echo", inputSchema: { type: "object" } },
  async run(input) {
    return { content: `echo ${JSON.stringify(input)}`, is_error: false };
  },
};

/** Summary requests (no tools, a transcript) go to `summaries`; the rest to `main`. */
function router(main: FakeProvider, summaries: FakeProvider): Provider {
  return {
    providerId: "fake", model: "fake-model",
    stream: (request: ProviderRequest, signal: AbortSignal) =>
      (request.tools.length === 0 && textOf(request.messages[0]!).startsWith("<conversation>") ? summaries : main).stream(request, signal),
  };
}

function harness(script: FakeStep[], summaryScript: FakeStep[], settings: Partial<CompactionSettings> = {}, store?: SessionStore, initialId?: string) {
  store ??= openStore(join(root, `s${n++}`));
  const bus = new EventBus();
  const events: KeenEvent[] = [];
  bus.subscribe((e) => void events.push(e));
  const main = new FakeProvider(script);
  const summaries = new FakeProvider(summaryScript);
  const provider = router(main, summaries);
  const compaction: CompactionSettings = { window: 1000, threshold: 0.8, keepTokens: 150, reserveTokens: 0, ...settings };
  let ids = 0;
  const setup: EngineSetup = {
    modelRef: "fake/fake-model", provider, tools: [echo], system: "sys", contextWindow: compaction.window, compaction,
    perTurn: () => ({ policies: [createCompactionPolicy(provider, compaction)], tools: [] }),
  };
  const engine = createSessionEngine({
    store, bus, headless: true, cwd: root, permissionMode: "auto", interactive: true,
    prepare: async () => setup, checkModel: (ref) => ref, listModels: () => [],
    retry: { maxRetries: 0, maxWaitMs: 0, idleTimeoutMs: 1000, baseDelayMs: 0 },
    newId: () => `${initialId ? "r" : "i"}d-${String(ids++).padStart(4, "0")}`,
    ...(initialId ? { initial: { id: initialId, cwd: root } } : {}),
  });
  const response = (id: string) =>
    new Promise<EventOf<"response">>((resolve) => {
      const found = events.find((e) => e.kind === "response" && e.id === id);
      if (found) return resolve(found as EventOf<"response">);
      const off = bus.subscribe((e) => {
        if (e.kind === "response" && e.id === id) {
          off();
          resolve(e);
        }
      });
    });
  const send = (command: Command) => engine.send(command);
  const ask = async (text: string, id: string) => {
    send({ kind: "prompt", id, text });
    return response(id);
  };
  return { engine, events, main, summaries, store, response, send, ask };
}

function textOf(message: Message): string {
  return message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
}
const long = (tag: string) => `${tag} ${"lorem ipsum ".repeat(30)}`;
const all = (messages: Message[]) => messages.map(textOf).join("\n");

test("cutIndex keeps tool calls with their results and the last user message", () => {
  const u = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });
  const a = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }] });
  const call: Message = { role: "assistant", content: [{ type: "thinking", thinking: "t", signature: "s" }, { type: "tool_call", id: "c1", name: "echo", input: {} }] };
  const result: Message = { role: "user", content: [{ type: "tool_result", tool_call_id: "c1", content: "x".repeat(800), is_error: false }] };
  const messages = [u(long("one")), a(long("two")), u("three"), call, result];
  // The tail that fits is too small for the call and its result: the cut falls before the call, never between.
  assert.equal(cutIndex(messages, 10), 3);
  assert.equal(cutIndex(messages, 10_000), 1);
  assert.equal(cutIndex([u(`${SUMMARY_HEAD} x`), a("Understood. I will continue from the summary."), u("now")], 0), 0);
});

test("a multi-turn session compacts: later requests carry summary, memory and recent turns, not the replaced ones; resume sends the same", async () => {
  const script: FakeStep[] = [];
  for (let i = 1; i <= 8; i++) script.push({ text: `${long(`answer-${i}`)}<keen_memory>fact ${i}</keen_memory>` });
  const h = harness(script, [{ text: "SUMMARY-A" }, { text: "SUMMARY-B" }, { text: "SUMMARY-C" }, { text: "SUMMARY-D" }], { keepTokens: 300 });
  for (let i = 1; i <= 8; i++) assert.equal((await h.ask(long(`prompt-${i}`), `p${i}`)).ok, true);
  const starts = h.events.filter((e) => e.kind === "compaction" && e.phase === "start");
  assert.ok(starts.length >= 1, "compacted at least once");
  const ends = h.events.filter((e): e is EventOf<"compaction"> => e.kind === "compaction" && e.phase === "end");
  assert.ok(ends.every((e) => e.trigger === "auto" && e.tokens_after! < e.tokens_before && !e.error));
  const last = h.main.requests.at(-1)!.messages;
  const first = last[0]!;
  assert.ok(textOf(first).startsWith(SUMMARY_HEAD));
  assert.match(textOf(first), /SUMMARY-/);
  assert.equal(first.headless, true, "the summary carries the headless flag");
  for (let i = 1; i <= 6; i++) assert.match(all(last), new RegExp(`fact ${i}<`), `memory ${i} survives`);
  assert.doesNotMatch(all(last), /prompt-1 /, "a replaced prompt is gone");
  assert.match(all(last), /prompt-8 /);
  assert.match(all(last), /answer-7 /, "the recent turn is kept verbatim");
  // The summary requests never saw tools and ended with the transcript.
  assert.ok(h.summaries.requests.every((r) => r.tools.length === 0));

  // Resume: the next request starts from the stored replacement, as the live one did.
  const stored = await h.store.load(h.engine.sessionId);
  assert.ok(stored.some((e) => e.kind === "context-replacement"));
  const projected = projectConversation(stored);
  assert.deepEqual(projected[0], first);
  h.send({ kind: "shutdown", id: "s" });
  await h.engine.done;
  const meta = await h.store.resolve(h.engine.sessionId);
  const r = harness([{ text: "resumed" }], [], { window: 100_000 }, h.store);
  r.send({ kind: "resume-session", id: "rs", session: meta.id });
  await r.response("rs");
  assert.equal((await r.ask("again", "q")).ok, true);
  const resumed = r.main.requests[0]!.messages;
  assert.deepEqual(resumed.slice(0, -1), projected);
  assert.ok(textOf(resumed[0]!).startsWith(SUMMARY_HEAD));
  assert.equal(resumed[0]!.headless, true);
  r.send({ kind: "shutdown", id: "s" });
  await r.engine.done;
});

test("a compaction inside a turn keeps each tool call with its result and the turn continues", async () => {
  const calls = (k: number): FakeStep => ({ text: long(`step-${k}`), toolCalls: [{ id: `c${k}`, name: "echo", input: { k, pad: "y".repeat(400) } }] });
  const h = harness([calls(1), calls(2), calls(3), calls(4), { text: "done" }], [{ text: "SUMMARY" }, { text: "SUMMARY2" }, { text: "SUMMARY3" }], { keepTokens: 300 });
  const res = await h.ask("work", "p");
  assert.equal(res.ok, true);
  assert.ok(h.events.some((e) => e.kind === "compaction"));
  const result = h.events.find((e) => e.kind === "result") as EventOf<"result">;
  assert.equal(result.status, "success");
  // FakeProvider checks every request: each tool call answered exactly once, so no pair was split.
  const stored = await h.store.load(h.engine.sessionId);
  const projected = projectConversation(stored);
  assert.equal(projected.at(-1)!.role, "assistant");
  assert.match(textOf(projected.at(-1)!), /done/);
  h.send({ kind: "shutdown", id: "s" });
  await h.engine.done;
});

test("a context-overflow error compacts once and retries; the turn succeeds", async () => {
  const overflow: FakeStep = { fail: { message: "400 invalid_request_error: prompt is too long: 300000 tokens > 200000 maximum", retryable: false, status: 400, overflow: true } };
  const h = harness([{ text: long("a1") }, { text: long("a2") }, overflow, { text: "fits now" }], [{ text: "SUMMARY" }], { window: 100_000, keepTokens: 50 });
  await h.ask(long("p1"), "p1");
  await h.ask(long("p2"), "p2");
  await h.ask("p3", "p3");
  const result = h.events.filter((e) => e.kind === "result").at(-1) as EventOf<"result">;
  assert.equal(result.status, "success");
  assert.equal(result.text, "fits now");
  const compactions = h.events.filter((e): e is EventOf<"compaction"> => e.kind === "compaction");
  assert.deepEqual(compactions.map((e) => [e.phase, e.trigger]), [["start", "overflow"], ["end", "overflow"]]);
  const retried = h.main.requests.at(-1)!.messages;
  assert.ok(textOf(retried[0]!).startsWith(SUMMARY_HEAD));
  assert.equal(textOf(retried.at(-1)!), "p3");
  h.send({ kind: "shutdown", id: "s" });
  await h.engine.done;
});

test("a failed compaction leaves the stored session unchanged and is reported; the turn goes on", async () => {
  const script: FakeStep[] = [];
  for (let i = 1; i <= 6; i++) script.push({ text: long(`answer-${i}`) });
  const h = harness(script, [
    { fail: { message: "boom", retryable: false } }, { text: "" }, { fail: { message: "boom", retryable: false } }, { fail: { message: "boom", retryable: false } },
    { fail: { message: "boom", retryable: false } }, { fail: { message: "boom", retryable: false } },
  ]);
  for (let i = 1; i <= 6; i++) {
    const res = await h.ask(long(`prompt-${i}`), `p${i}`);
    assert.equal(res.ok, true, res.error);
  }
  const ends = h.events.filter((e): e is EventOf<"compaction"> => e.kind === "compaction" && e.phase === "end");
  assert.ok(ends.length >= 1);
  assert.ok(ends.every((e) => e.error && e.tokens_after === undefined));
  assert.ok(ends.some((e) => e.error === "the summary came back empty"));
  const stored = await h.store.load(h.engine.sessionId);
  assert.ok(!stored.some((e) => e.kind === "context-replacement"));
  // Every request carried the whole conversation.
  assert.match(all(h.main.requests.at(-1)!.messages), /prompt-1 /);
  assert.ok(h.events.filter((e) => e.kind === "result").every((e) => (e as EventOf<"result">).status === "success"));
  h.send({ kind: "shutdown", id: "s" });
  await h.engine.done;
});

test("the compact command: works on an idle session with instructions, refuses while a turn runs and before any turn", async () => {
  const h = harness([{ text: long("a1") }, { text: long("a2") }, { hang: true }], [{ text: "MANUAL SUMMARY" }], { window: 100_000, keepTokens: 10 });
  h.send({ kind: "compact", id: "c0" });
  assert.match((await h.response("c0")).error ?? "", /no conversation/);
  await h.ask(long("p1"), "p1");
  await h.ask(long("p2"), "p2");
  h.send({ kind: "compact", id: "c1", instructions: "focus on the tests" });
  const ok = await h.response("c1");
  assert.equal(ok.ok, true, ok.error);
  const data = ok.data as { tokens_before: number; tokens_after: number };
  assert.ok(data.tokens_after < data.tokens_before);
  assert.match(textOf(h.summaries.requests[0]!.messages[0]!), /focus on the tests/);
  const compactions = h.events.filter((e): e is EventOf<"compaction"> => e.kind === "compaction");
  assert.deepEqual(compactions.map((e) => [e.phase, e.trigger]), [["start", "manual"], ["end", "manual"]]);
  const projected = projectConversation(await h.store.load(h.engine.sessionId));
  assert.ok(textOf(projected[0]!).startsWith(SUMMARY_HEAD));
  assert.equal(projected.length, 2, "summary and acknowledgement: both turns were over the keep budget");
  // Busy: a hanging turn.
  h.send({ kind: "prompt", id: "p3", text: "hang" });
  while (!h.events.some((e) => e.kind === "user-message" && textOf(e.message) === "hang")) await new Promise((r) => setTimeout(r, 5));
  h.send({ kind: "compact", id: "c2" });
  assert.match((await h.response("c2")).error ?? "", /a turn is running/);
  h.send({ kind: "interrupt", id: "i" });
  await h.response("p3");
  h.send({ kind: "shutdown", id: "s" });
  await h.engine.done;
});
