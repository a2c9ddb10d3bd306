import { after, test } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { EventBus } from "../../protocol/bus.js";
import { request } from "../../protocol/client.js";
import type { EventOf, KeenEvent } from "../../protocol/events.js";
import { ERROR_CODES, ErrorCodeSchema, errorCodeOf, type ErrorCode } from "../../protocol/responses.js";
import { createSessionEngine, type EngineOptions, type EngineSetup } from "../../app/agent/engine.js";
import { UsageError } from "../../app/cli/errors.js";
import { openStore } from "../../storage/level-store.js";
import { FakeProvider, type FakeStep } from "../fakes/fake-provider.js";
import { makeTempDir } from "../temp.js";

/* The engine's typed answers: every refusal carries an error_code, and `request()` resolves with the matching response. */

const root = makeTempDir("keen-answers-");
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

function harness(script: FakeStep[], over: Partial<EngineOptions> = {}) {
  const store = openStore(join(root, `s${n++}`));
  const bus = new EventBus();
  const events: KeenEvent[] = [];
  bus.subscribe((e) => void events.push(e));
  const setup: EngineSetup = {
    modelRef: "fake/fake-model", provider: new FakeProvider(script), tools: [], system: "sys", contextWindow: 1000,
    perTurn: () => ({ policies: [], tools: [] }),
  };
  let ids = 0;
  const engine = createSessionEngine({
    store, bus, headless: true, cwd: root, permissionMode: "ask", interactive: true,
    prepare: async () => setup,
    checkModel: (ref) => {
      if (!ref.startsWith("fake/")) throw new Error(`unknown provider in "${ref}"`);
      return ref;
    },
    listModels: () => [{ model: "fake/fake-model", provider: "fake", available: true }],
    retry: { maxRetries: 0, maxWaitMs: 0, idleTimeoutMs: 1000, baseDelayMs: 0 },
    newId: () => `id-${String(ids++).padStart(4, "0")}`,
    ...over,
  });
  return { engine, events, store };
}

test("request() resolves with the response to its own command, typed by kind, after the events before it", async () => {
  const h = harness([{ text: "Hello." }]);
  // Sent together: each promise gets its own answer although the prompt is answered last.
  const prompt = request(h.engine, { kind: "prompt", text: "hi" });
  const models = request(h.engine, { kind: "list-models" });
  const mode = request(h.engine, { kind: "set-permission-mode", mode: "read-only" });
  const [p, m, pm] = await Promise.all([prompt, models, mode]);
  assert.ok(p.ok && m.ok && pm.ok);
  assert.equal(p.data.status, "success");
  assert.ok(h.events.some((e) => e.kind === "result"), "the turn's result came before its answer");
  assert.deepEqual(m.data.map((row) => [row.model, row.current]), [["fake/fake-model", true]]);
  assert.equal(pm.data.mode, "read-only");
  assert.deepEqual([p.command, m.command, pm.command], ["prompt", "list-models", "set-permission-mode"]);
  // Ids are the helper's and unique.
  assert.equal(new Set([p.id, m.id, pm.id]).size, 3);
  await request(h.engine, { kind: "shutdown" });
});

test("each refusal the engine can tell apart carries its error_code beside the text", async () => {
  const h = harness([{ hang: true }], { modeCeiling: { mode: "accept-edits", source: "--permission-mode" } });
  const code = async (answer: Promise<{ ok: boolean; error_code?: ErrorCode; error?: string }>) => {
    const r = await answer;
    assert.equal(r.ok, false);
    assert.equal(typeof r.error, "string");
    return r.error_code;
  };
  assert.equal(await code(request(h.engine, { kind: "prompt", text: "  " })), "empty_prompt");
  assert.equal(await code(request(h.engine, { kind: "permission-response", request_id: "nope", decision: "deny" })), "no_request");
  assert.equal(await code(request(h.engine, { kind: "set-permission-mode", mode: "auto" })), "permission_ceiling");
  assert.equal(await code(request(h.engine, { kind: "set-model", model: "nosuch/x" })), "unknown_model");
  assert.equal(await code(request(h.engine, { kind: "resume-session", session: "zzzz" })), "unknown_session");
  assert.equal(await code(request(h.engine, { kind: "undo" })), "nothing_to_undo");
  assert.equal(await code(request(h.engine, { kind: "compact" })), "nothing_to_compact");
  // A turn that hangs: switching sessions is refused as busy; a prompt sent after the interrupt is not dropped, one before it is.
  const running = request(h.engine, { kind: "prompt", text: "hang" });
  const queued = request(h.engine, { kind: "prompt", text: "never" });
  assert.equal(await code(request(h.engine, { kind: "new-session" })), "busy");
  await request(h.engine, { kind: "interrupt" });
  assert.equal(await code(queued), "interrupted");
  const ended = await running;
  assert.ok(ended.ok && ended.data.status === "interrupted");
  const invalid = new Promise<EventOf<"response">>((resolve) => h.engine.subscribe((e) => void (e.kind === "response" && e.id === "bad" && resolve(e))));
  h.engine.reject("not JSON", "bad");
  assert.deepEqual(await invalid.then((r) => [r.command, r.error_code]), ["invalid", "invalid"]);
  await request(h.engine, { kind: "shutdown" });
  assert.equal(await code(request(h.engine, { kind: "list-sessions" })), "shutting_down");
});

test("setup failures: no_provider from a coded error, session_busy from another claim, failed for the rest", async () => {
  const none = harness([], { prepare: async () => Promise.reject(new UsageError("no provider configured: set ANTHROPIC_API_KEY", "no_provider")) });
  const r = await request(none.engine, { kind: "prompt", text: "hi" });
  assert.deepEqual([r.ok, r.error_code, r.error], [false, "no_provider", "no provider configured: set ANTHROPIC_API_KEY"]);
  await none.engine.close();

  const broken = harness([], { prepare: async () => Promise.reject(new Error("the config is damaged")) });
  assert.equal((await request(broken.engine, { kind: "prompt", text: "hi" })).error_code, "failed");
  await broken.engine.close();

  const held = harness([{ text: "One." }]);
  const first = await request(held.engine, { kind: "prompt", text: "one" });
  assert.ok(first.ok);
  // This process holds the claim now, as another Keen would: the engine's next turn cannot claim it.
  await held.store.claim(first.data.session_id);
  const second = await request(held.engine, { kind: "prompt", text: "two" });
  assert.deepEqual([second.ok, second.error_code], [false, "session_busy"]);
  await held.engine.close();
});

test("error events carry a code: a provider failure is `provider`", async () => {
  const h = harness([{ fail: { message: "overloaded", retryable: false } }]);
  const r = await request(h.engine, { kind: "prompt", text: "hi" });
  assert.ok(r.ok && r.data.status === "error");
  const errors = h.events.filter((e): e is EventOf<"error"> => e.kind === "error");
  assert.deepEqual(errors.map((e) => [e.error_code, e.message]), [["provider", "overloaded"]]);
  await h.engine.close();
});

test("a turn that runs out of time reports an `error` event with error_code timeout", async () => {
  const h = harness([{ hang: true }], { turnTimeoutMs: 50 });
  const r = await request(h.engine, { kind: "prompt", text: "hang" });
  assert.ok(r.ok && r.data.status === "error");
  const errors = h.events.filter((e): e is EventOf<"error"> => e.kind === "error");
  assert.deepEqual(errors.map((e) => e.error_code), ["timeout"]);
  await h.engine.close();
});

test("the code enum: every code is described, and errorCodeOf only trusts Keen's codes", () => {
  assert.deepEqual(ErrorCodeSchema.options, Object.keys(ERROR_CODES));
  assert.equal(errorCodeOf(new UsageError("x", "no_provider")), "no_provider");
  // A Node system error's code is not one of Keen's.
  assert.equal(errorCodeOf(Object.assign(new Error("gone"), { code: "ENOENT" })), "failed");
  assert.equal(errorCodeOf("text", "unknown_model"), "unknown_model");
});
