import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventBus } from "../../protocol/bus.js";
import type { KeenEvent } from "../../protocol/events.js";
import { emptyUsage } from "../../protocol/usage.js";
import type { BackendTurnOptions, TurnBackend } from "../../app/agent/backend.js";
import { createSessionEngine } from "../../app/agent/engine.js";
import { openStore } from "../../storage/level-store.js";
import { FakeProvider } from "../fakes/fake-provider.js";

const root = mkdtempSync(join(tmpdir(), "keen-backend-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** A backend that answers "done N" or, for "hang", waits for the abort; it records what the engine handed it. */
function scriptedBackend(seen: BackendTurnOptions[]): TurnBackend {
  return {
    name: "cli",
    async run(options) {
      seen.push(options);
      await options.emit({ kind: "user-message", turn_id: options.turnId, message: options.user });
      const hang = options.user.content.some((b) => b.type === "text" && b.text === "hang");
      if (hang && !options.signal.aborted) await new Promise((resolve) => options.signal.addEventListener("abort", resolve, { once: true }));
      const text = hang ? "" : `done ${seen.length}`;
      const status = hang ? "interrupted" : "success";
      if (text) await options.emit({ kind: "text", role: "assistant", content: text });
      await options.emit({ kind: "turn-end", turn_id: options.turnId, status, steps: 1, runner: "cli", cli_session_id: `cli-${seen.length}` });
      return { status, text, steps: 1, usage: emptyUsage(), errors: [], assistant: [] };
    },
  };
}

test("a setup's backend runs each turn; the engine keeps events, result, store and abort", async () => {
  const store = openStore(join(root, "s"));
  const bus = new EventBus();
  const events: KeenEvent[] = [];
  bus.subscribe((e) => void events.push(e));
  const seen: BackendTurnOptions[] = [];
  let ids = 0;
  const engine = createSessionEngine({
    store, bus, headless: true, cwd: root, permissionMode: "accept-edits", interactive: false,
    prepare: async () => ({
      modelRef: "anthropic/m", provider: new FakeProvider([]), tools: [], system: "", contextWindow: 1000,
      perTurn: () => ({ policies: [], tools: [] }), backend: scriptedBackend(seen),
    }),
    checkModel: (ref) => ref, listModels: () => [],
    retry: { maxRetries: 0, maxWaitMs: 0, idleTimeoutMs: 1000, baseDelayMs: 0 },
    newId: () => `id-${String(ids++).padStart(4, "0")}`,
  });
  const result = () => new Promise<KeenEvent>((resolve) => {
    const off = bus.subscribe((e) => {
      if (e.kind === "result") {
        off();
        resolve(e);
      }
    });
  });
  let next = result();
  engine.send({ kind: "prompt", id: "p1", text: "one" });
  assert.equal((await next as { text: string }).text, "done 1");
  next = result();
  engine.send({ kind: "prompt", id: "p2", text: "two" });
  assert.equal((await next as { text: string }).text, "done 2");
  next = result();
  engine.send({ kind: "prompt", id: "p3", text: "hang" });
  while (seen.length < 3) await new Promise((r) => setTimeout(r, 5));
  engine.send({ kind: "interrupt", id: "i" });
  assert.equal((await next as { status: string }).status, "interrupted");
  engine.send({ kind: "shutdown" });
  await engine.done;

  assert.equal(seen[0]!.cwd, root);
  assert.equal(seen[0]!.permissionMode, "accept-edits");
  assert.deepEqual(seen[0]!.events, []);
  // The second turn reads what the first stored: a backend keeps its own state there.
  assert.ok(seen[1]!.events.some((e) => e.kind === "turn-end" && e.cli_session_id === "cli-1"));
  const stored = await store.load(engine.sessionId);
  assert.deepEqual(stored.filter((e) => e.kind === "result").map((e) => (e as { status: string }).status), ["success", "success", "interrupted"]);
  assert.equal((await store.resolve(engine.sessionId)).status, "interrupted");
});
