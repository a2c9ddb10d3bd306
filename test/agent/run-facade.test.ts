import { after, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventBus } from "../../protocol/bus.js";
import type { KeenEvent } from "../../protocol/events.js";
import { emptyUsage } from "../../protocol/usage.js";
import type { TurnBackend } from "../../app/agent/backend.js";
import { createSessionEngine } from "../../app/agent/engine.js";
import { createRunFacade } from "../../app/agent/run-facade.js";
import { openStore } from "../../storage/level-store.js";
import { FakeProvider } from "../fakes/fake-provider.js";

const root = mkdtempSync(join(tmpdir(), "keen-facade-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** Streams "partial" then, for "hang", waits for the abort; else answers "done". */
const cliLike: TurnBackend = {
  name: "cli",
  async run(options) {
    await options.emit({ kind: "user-message", turn_id: options.turnId, message: options.user });
    await options.emit({ kind: "text-delta", role: "assistant", attempt: 1, delta: "partial" });
    const hang = options.user.content.some((b) => b.type === "text" && b.text === "hang");
    if (hang && !options.signal.aborted) await new Promise((resolve) => options.signal.addEventListener("abort", resolve, { once: true }));
    await options.emit({ kind: "content-end", role: "assistant", attempt: 1 });
    const status = hang ? "interrupted" : "success";
    await options.emit({ kind: "turn-end", turn_id: options.turnId, status, steps: 1, runner: "cli" });
    return { status, text: hang ? "" : "done", steps: 1, usage: emptyUsage(), errors: [], assistant: [] };
  },
};

for (const backend of ["embedded", "cli"] as const) {
  test(`the seed's run API answers from the engine's state (${backend} backend)`, async () => {
    const bus = new EventBus();
    const provider = new FakeProvider([{ text: "done" }, { hang: true, deltas: ["partial"] }]);
    let ids = 0;
    const engine = createSessionEngine({
      store: openStore(join(root, backend)), bus, headless: true, cwd: root, permissionMode: "auto", interactive: false,
      prepare: async () => ({
        modelRef: "anthropic/m", provider, tools: [], system: "", contextWindow: 1000, perTurn: () => ({ policies: [], tools: [] }),
        ...(backend === "cli" ? { backend: cliLike } : {}),
      }),
      checkModel: (ref) => ref, listModels: () => [],
      retry: { maxRetries: 0, maxWaitMs: 0, idleTimeoutMs: 5000, baseDelayMs: 0 },
      newId: () => `id-${String(ids++).padStart(4, "0")}`,
    });
    const runs = createRunFacade(engine);
    const id = engine.sessionId;
    assert.equal(runs.isActive(id), false);
    assert.equal(await runs.waitForEnd(id, 10), true);
    assert.equal(runs.abort(id), false);
    assert.equal(runs.queueMessage(id, "later"), false);

    const first = await runs.run(id, "one");
    assert.equal(first.text, "done");
    assert.equal(first.status, "success");
    assert.equal(runs.isActive(id), false);

    const streamed = new Promise<void>((resolve) => {
      const off = engine.subscribe((e: KeenEvent) => {
        if (e.kind === "text-delta") (off(), resolve());
      });
    });
    const hung = runs.run(id, "hang");
    assert.equal(runs.isActive(id), true);
    await streamed;
    assert.equal(runs.isStreaming(id), true);
    assert.equal(runs.isActive("another-session"), false);
    assert.equal(await runs.waitForEnd(id, 20), false, "still running after 20 ms");
    assert.equal(runs.queueMessage(id, "after the hang"), true);
    assert.equal(runs.abort(id), true);
    assert.equal((await hung).status, "interrupted");
    assert.equal(await runs.waitForEnd(id, 5000), true);
    assert.equal(runs.isActive(id), false);
    assert.equal(runs.isStreaming(id), false);
    engine.send({ kind: "shutdown" });
    await engine.done;
  });
}
