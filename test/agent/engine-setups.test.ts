import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { EventBus } from "../../protocol/bus.js";
import { request } from "../../protocol/client.js";
import type { EventDraft, KeenEvent } from "../../protocol/events.js";
import { emptyUsage } from "../../protocol/usage.js";
import type { TurnBackend } from "../../app/agent/backend.js";
import { createSessionEngine, type EngineOptions, type EngineSetup } from "../../app/agent/engine.js";
import { openStore } from "../../storage/level-store.js";
import { FakeProvider } from "../fakes/fake-provider.js";
import { makeTempDir } from "../temp.js";

/* Item 2 of issue 25: the engine owns its setups (one cache), their news, list-models' current model; no stand-in provider. */

const root = makeTempDir("keen-setups-");
let stores = 0;

function engineWith(prepare: EngineOptions["prepare"], extra: Partial<EngineOptions> = {}) {
  const bus = new EventBus();
  const events: KeenEvent[] = [];
  bus.subscribe((e) => void events.push(e));
  let ids = 0;
  const engine = createSessionEngine({
    store: openStore(join(root, `s${stores++}`)), bus, headless: false, cwd: root, permissionMode: "ask", interactive: true, prepare,
    checkModel: () => {
      throw new Error("no check here");
    },
    listModels: () => [{ model: "anthropic/a", provider: "anthropic", available: true }, { model: "openai/b", provider: "openai", available: true }],
    retry: { maxRetries: 0, maxWaitMs: 0, idleTimeoutMs: 1000, baseDelayMs: 0 },
    newId: () => `id-${String(ids++).padStart(4, "0")}`,
    ...extra,
  });
  return { engine, events };
}

const base = { tools: [], system: "", contextWindow: 1000, perTurn: () => ({ policies: [], tools: [] }) };

test("one setup per session however many ask at once; list-models names the setup's model; close ends the setup", async () => {
  let prepared = 0;
  let closed = 0;
  const { engine } = engineWith(async () => {
    prepared++;
    return { ...base, modelRef: "openai/b", provider: new FakeProvider([]), close: async () => void closed++ };
  });
  const [setup, models] = await Promise.all([engine.prepare(), request(engine, { kind: "list-models" }), engine.prepare()]);
  assert.equal(setup.modelRef, "openai/b");
  assert.equal(prepared, 1);
  assert.ok(models.ok);
  // checkModel throws here: the current model comes from the setup, and its provider is listed first.
  assert.deepEqual(models.data.map((m) => [m.model, m.current]), [["openai/b", true], ["anthropic/a", false]]);
  await engine.close();
  assert.equal(closed, 1);
});

test("a failed preparation is not kept: the next ask prepares again", async () => {
  let calls = 0;
  const { engine } = engineWith(async () => {
    if (++calls === 1) throw new Error("no provider yet");
    return { ...base, modelRef: "anthropic/a", provider: new FakeProvider([]) };
  });
  await assert.rejects(engine.prepare(), /no provider yet/);
  assert.equal((await engine.prepare()).modelRef, "anthropic/a");
  assert.equal(calls, 2);
  await engine.close();
});

test("earlyNews: setup news reaches a new subscriber through the engine's emit: stamped with the session and redacted", { timeout: 60_000 }, async () => {
  const secret = "sk-secret-value";
  let attached: ((event: EventDraft) => Promise<void>) | undefined;
  const setup: EngineSetup = {
    ...base, modelRef: "anthropic/a", provider: new FakeProvider([]),
    redactor: { redact: (text: string) => text.replaceAll(secret, "[redacted]"), redactDeep: <T>(value: T) => JSON.parse(JSON.stringify(value).replaceAll(secret, "[redacted]")) as T },
    attach: (emit) => {
      attached = emit;
      void emit({ kind: "mcp-server", server: "db", status: "failed", tools: [], message: `bad token ${secret}` });
    },
  };
  const { engine, events } = engineWith(async () => setup, { earlyNews: true });
  await engine.prepare();
  const seen = new Promise<KeenEvent>((resolve) => engine.subscribe((e) => void (e.kind === "mcp-server" && resolve(e))));
  const news = await seen as KeenEvent & { message: string };
  assert.equal(news.conversation_id, engine.sessionId);
  assert.equal(typeof news.ts, "number");
  assert.equal(news.message, "bad token [redacted]");
  assert.ok(attached, "the setup was attached");
  assert.ok(events.some((e) => e.kind === "mcp-server"), "the news went over the engine's bus");
  await engine.close();
});

test("without earlyNews, news waits for the first turn's session-start", async () => {
  const setup: EngineSetup = {
    ...base, modelRef: "anthropic/a", provider: new FakeProvider([]),
    attach: (emit) => void emit({ kind: "mcp-server", server: "db", status: "connected", tools: [] }),
  };
  const { engine, events } = engineWith(async () => setup);
  await engine.prepare();
  engine.subscribe(() => {});
  await request(engine, { kind: "list-sessions" });
  assert.deepEqual(events.filter((e) => e.kind === "mcp-server"), []);
  await engine.close();
});

test("a setup whose backend runs whole turns has no provider: compaction is refused with the reason, turns still run", async () => {
  const backend: TurnBackend = {
    name: "cli",
    async run(options) {
      assert.equal("provider" in options, false, "a backend gets no provider");
      await options.emit({ kind: "user-message", turn_id: options.turnId, message: options.user });
      await options.emit({ kind: "text", role: "assistant", content: "hi" });
      await options.emit({ kind: "turn-end", turn_id: options.turnId, status: "success", steps: 1, runner: "cli" });
      return { status: "success", text: "hi", steps: 1, usage: emptyUsage(), errors: [], assistant: [] };
    },
  };
  const { engine } = engineWith(async () => ({ ...base, modelRef: "anthropic/a", backend }));
  const turn = await request(engine, { kind: "prompt", text: "hello" });
  assert.ok(turn.ok);
  const compact = await request(engine, { kind: "compact" });
  assert.equal(compact.ok, false);
  assert.equal(compact.ok ? undefined : compact.error_code, "compaction_failed");
  assert.match(compact.ok ? "" : compact.error, /not available with the CLI runner/);
  await engine.close();
});
