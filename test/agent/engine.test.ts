import { after, test } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { EventBus } from "../../protocol/bus.js";
import type { Command, PermissionMode } from "../../protocol/commands.js";
import type { KeenEvent } from "../../protocol/events.js";
import { createSessionEngine, type EngineSetup } from "../../app/agent/engine.js";
import { createMaxStepsPolicy } from "../../app/agent/max-steps.js";
import type { Tool } from "../../app/tools/tool.js";
import { openStore } from "../../storage/level-store.js";
import { FakeProvider, type FakeStep } from "../fakes/fake-provider.js";
import { makeTempDir } from "../temp.js";

const root = makeTempDir("keen-engine-");
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

const ran: string[] = [];
const shell: Tool = {
  definition: { name: "bash", description: "run", inputSchema: { type: "object" } },
  async run(input) {
    ran.push((input as { command: string }).command);
    return { content: `ran ${(input as { command: string }).command}`, is_error: false };
  },
};

/** An engine over a fresh store with a scripted provider; events collected in order. */
function harness(script: FakeStep[], options: { mode?: PermissionMode; interactive?: boolean; maxTurns?: number } = {}) {
  const store = openStore(join(root, `s${n++}`));
  const bus = new EventBus();
  const events: KeenEvent[] = [];
  bus.subscribe((e) => void events.push(e));
  const provider = new FakeProvider(script);
  let ids = 0;
  const setup: EngineSetup = {
    modelRef: "fake/fake-model", provider, tools: [shell], system: "sys", contextWindow: 1000,
    perTurn: () => ({ policies: options.maxTurns ? [createMaxStepsPolicy(options.maxTurns, true, false)] : [], tools: [] }),
  };
  const engine = createSessionEngine({
    store, bus, headless: true, cwd: root, permissionMode: options.mode ?? "auto", interactive: options.interactive ?? true,
    prepare: async () => setup, checkModel: (ref) => ref, listModels: () => [],
    retry: { maxRetries: 0, maxWaitMs: 0, idleTimeoutMs: 1000, baseDelayMs: 0 },
    newId: () => `id-${String(ids++).padStart(4, "0")}`,
  });
  const responses = (id: string) =>
    new Promise<KeenEvent & { kind: "response" }>((resolve) => {
      const found = events.find((e) => e.kind === "response" && e.id === id);
      if (found) return resolve(found as KeenEvent & { kind: "response" });
      const off = bus.subscribe((e) => {
        if (e.kind === "response" && e.id === id) {
          off();
          resolve(e);
        }
      });
    });
  const next = (kind: string) =>
    new Promise<KeenEvent>((resolve) => {
      const off = bus.subscribe((e) => {
        if (e.kind === kind) {
          off();
          resolve(e);
        }
      });
    });
  const send = (command: Command) => engine.send(command);
  return { engine, events, kinds: () => events.map((e) => e.kind), provider, store, responses, next, send };
}

test("one prompt then shutdown: the whole event sequence, stored, claim released", async () => {
  const h = harness([{ text: "Hello." }]);
  h.send({ kind: "prompt", id: "p", text: "hi" });
  h.send({ kind: "shutdown", id: "s" });
  await h.engine.done;
  assert.deepEqual(h.kinds(), [
    "session-start", "user-message", "text", "text-delta", "content-end", "text", "assistant-message", "turn-end", "result",
    "response", "response",
  ]);
  const result = h.events.find((e) => e.kind === "result") as KeenEvent & { kind: "result" };
  assert.deepEqual([result.status, result.text, result.context, result.stop_reason], ["success", "Hello.", { used: 15, window: 1000 }, "end_turn"]);
  const [meta] = await h.store.list();
  assert.deepEqual([meta!.status, meta!.title], ["success", "hi"]);
  const stored = (await h.store.load(meta!.id)).map((e) => e.kind);
  assert.deepEqual(stored, ["session-start", "user-message", "text", "text", "assistant-message", "turn-end", "result"]);
  await h.store.claim(meta!.id); // released: another writer may claim it
});

test("a prompt during a turn is queued and runs after it; a follow-up sees the first exchange", async () => {
  const h = harness([{ text: "One." }, { text: "Two." }]);
  h.send({ kind: "prompt", id: "a", text: "first" });
  h.send({ kind: "prompt", id: "b", text: "second" });
  await h.responses("b");
  const order = h.events.filter((e) => e.kind === "result" || (e.kind === "text" && e.role === "user")).map((e) => e.kind === "result" ? `result:${e.text}` : `user:${(e as { content: string }).content}`);
  assert.deepEqual(order, ["user:first", "result:One.", "user:second", "result:Two."]);
  assert.equal(h.provider.requests[1]!.messages.length, 3);
});

test("ask mode: a permission request waits for its reply; deny-always holds for the session", async () => {
  const h = harness([
    { toolCalls: [{ id: "c1", name: "bash", input: { command: "ls" } }] },
    { toolCalls: [{ id: "c2", name: "bash", input: { command: "rm -rf /" } }] },
    { text: "ok" },
  ], { mode: "ask" });
  ran.length = 0;
  const asked = h.next("permission-request");
  h.send({ kind: "prompt", id: "p", text: "go" });
  const request = (await asked) as KeenEvent & { kind: "permission-request" };
  assert.deepEqual([request.tool_name, request.tool_call_id, request.input], ["bash", "c1", '{"command":"ls"}']);
  h.send({ kind: "permission-response", id: "r", request_id: request.request_id, decision: "deny-always" });
  await h.responses("p");
  assert.deepEqual(ran, []);
  assert.equal(h.kinds().filter((k) => k === "permission-request").length, 1, "deny-always: the second call is refused without asking");
  const results = h.events.filter((e) => e.kind === "tool-result").map((e) => (e as { result: string }).result);
  assert.match(results[0]!, /denied/);
  assert.match(results[1]!, /denied bash for the rest of this session/);
  assert.ok(h.kinds().includes("permission-rule"));
});

test("non-interactive engine: a call that would ask is refused at once with a reason", async () => {
  const h = harness([{ toolCalls: [{ id: "c1", name: "bash", input: { command: "ls" } }] }, { text: "ok" }], { mode: "accept-edits", interactive: false });
  h.send({ kind: "prompt", id: "p", text: "go" });
  await h.responses("p");
  const result = h.events.find((e) => e.kind === "tool-result") as KeenEvent & { kind: "tool-result" };
  assert.equal(result.is_error, true);
  assert.match(result.result, /nobody to ask/);
  assert.ok(!h.kinds().includes("permission-request"));
});

test("interrupt ends a hanging turn as interrupted, drops queued prompts, and the next prompt works", async () => {
  const h = harness([{ hang: true, deltas: ["par", "tial"] }, { text: "Again." }]);
  const delta = h.next("text-delta");
  h.send({ kind: "prompt", id: "p1", text: "hang" });
  h.send({ kind: "prompt", id: "queued", text: "never" });
  await delta;
  h.send({ kind: "interrupt", id: "i" });
  const first = await h.responses("p1");
  assert.equal((first.data as { status: string }).status, "interrupted");
  assert.equal((await h.responses("queued")).ok, false);
  h.send({ kind: "prompt", id: "p2", text: "again" });
  assert.equal(((await h.responses("p2")).data as { status: string }).status, "success");
  const [meta] = await h.store.list();
  assert.equal(meta!.status, "success");
});

test("an interrupt while idle stops nothing: the next prompt's turn runs", async () => {
  const h = harness([{ text: "First." }, { toolCalls: [{ id: "c1", name: "bash", input: { command: "ls" } }] }, { text: "Second." }]);
  h.send({ kind: "prompt", id: "p1", text: "one" });
  await h.responses("p1");
  h.send({ kind: "interrupt", id: "i" });
  assert.deepEqual((await h.responses("i")).data, { interrupted: false });
  h.send({ kind: "prompt", id: "p2", text: "two" });
  assert.equal(((await h.responses("p2")).data as { status: string }).status, "success");
});

test("commands that do not fit the state get error responses; set-permission-mode changes the next decision", async () => {
  const h = harness([{ toolCalls: [{ id: "c1", name: "bash", input: { command: "ls" } }] }, { text: "ok" }], { mode: "ask" });
  h.send({ kind: "permission-response", id: "x", request_id: "nope", decision: "allow-once" });
  assert.match((await h.responses("x")).error!, /no permission request/);
  h.send({ kind: "prompt", id: "e", text: "   " });
  assert.equal((await h.responses("e")).ok, false);
  h.send({ kind: "set-permission-mode", id: "m", mode: "auto" });
  assert.equal((await h.responses("m")).ok, true);
  h.send({ kind: "prompt", id: "p", text: "go" });
  await h.responses("p");
  assert.ok(!h.kinds().includes("permission-request"));
  h.engine.reject("garbage", "g");
  assert.deepEqual(await h.responses("g").then((r) => [r.ok, r.command, r.error]), [false, "invalid", "garbage"]);
});

test("policies: a step limit ends the turn with max_turns", async () => {
  const h = harness([
    { toolCalls: [{ id: "c1", name: "bash", input: { command: "a" } }] },
    { text: "best guess" },
  ], { maxTurns: 2 });
  h.send({ kind: "prompt", id: "p", text: "go" });
  await h.responses("p");
  const result = h.events.find((e) => e.kind === "result") as KeenEvent & { kind: "result" };
  assert.deepEqual([result.status, result.text, result.is_error], ["max_turns", "best guess", false]);
  assert.deepEqual(h.events.filter((e) => e.kind === "prompt-injection").map((e) => (e as { name: string }).name), ["max-steps-prewarn", "max-steps-final"]);
});

test("resume-session continues a stored session, in another directory when asked", async () => {
  const h = harness([{ text: "one" }, { text: "two" }]);
  h.send({ kind: "prompt", id: "p", text: "first" });
  await h.responses("p");
  const id = h.engine.sessionId;
  h.send({ kind: "new-session", id: "n" });
  await h.responses("n");
  h.send({ kind: "resume-session", id: "r", session: id, replay: true, cwd: "/elsewhere" });
  const resumed = await h.responses("r");
  assert.deepEqual(resumed.data, { session_id: id, cwd: "/elsewhere", model: "fake/fake-model", title: "first" });
  assert.deepEqual(h.events.filter((e) => e.replay).map((e) => e.kind), ["text", "text"]);
  h.send({ kind: "prompt", id: "p2", text: "second" });
  await h.responses("p2");
  assert.equal(h.provider.requests[1]!.messages.length, 3, "the resumed turn sees the first exchange");
  const [meta] = await h.store.list();
  assert.equal(meta!.cwd, "/elsewhere");
});

test("commands act in order; an interrupt overtakes a prompt still waiting behind an earlier command and drops it", async () => {
  const h = harness([]);
  // list-sessions reads the store: the prompt written after it waits, and the interrupt (which acts at once) comes first.
  h.send({ kind: "list-sessions", id: "ls" });
  h.send({ kind: "prompt", id: "p", text: "never runs" });
  h.send({ kind: "interrupt", id: "i" });
  h.send({ kind: "shutdown", id: "s" });
  await h.engine.done;
  const answers = h.events.filter((e) => e.kind === "response").map((e) => [e.id, e.ok, e.error]);
  assert.deepEqual(answers, [["i", true, undefined], ["ls", true, undefined], ["p", false, "dropped: the turn was interrupted"], ["s", true, undefined]]);
  assert.equal(h.provider.requests.length, 0);
});
