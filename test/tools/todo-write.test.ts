import { test } from "node:test";
import assert from "node:assert/strict";
import type { EventDraft, EventOf } from "../../protocol/events.js";
import { createPermissionGate } from "../../app/agent/permission-gate.js";
import { runTurn } from "../../app/agent/turn.js";
import { createTools } from "../../app/tools/index.js";
import { callView } from "../../app/tools/tool.js";
import { PERMISSION_MODES } from "../../protocol/modes.js";
import { FakeProvider } from "../fakes/fake-provider.js";
import { tempWorkspace } from "./helpers.js";

const first = [
  { content: "Read the config", status: "completed" },
  { content: "Fix the parser", status: "in_progress", priority: "high" },
  { content: "Run the tests", status: "pending" },
];
const second = [{ content: "Run the tests", status: "in_progress" }];

async function turnIn(mode: (typeof PERMISSION_MODES)[number]) {
  const ctx = tempWorkspace().ctx();
  const events: EventDraft[] = [];
  const gate = createPermissionGate({ mode, interactive: true, newId: () => "r1", emit: async (e) => void events.push(e) });
  const provider = new FakeProvider([
    { toolCalls: [{ id: "c1", name: "todo_write", input: { todos: first } }] },
    { toolCalls: [{ id: "c2", name: "todo_write", input: { todos: second } }, { id: "c3", name: "todo_write", input: { todos: [{ content: "", status: "done" }] } }] },
    { text: "Done." },
  ]);
  const outcome = await runTurn({
    sessionId: "s1", turnId: "t1", provider, tools: createTools(ctx), system: "sys", history: [],
    user: { role: "user", content: [{ type: "text", text: "go" }], headless: false },
    emit: async (e) => void events.push(e), requester: gate,
    retry: { maxRetries: 0, maxWaitMs: 1000, idleTimeoutMs: 5000, baseDelayMs: 1 },
    signal: new AbortController().signal, sleep: async () => {},
  });
  return { outcome, events };
}

for (const mode of PERMISSION_MODES) {
  test(`todo_write runs unasked in ${mode} mode; each call's plan-update carries the whole list, replacing the last`, async () => {
    const { outcome, events } = await turnIn(mode);
    assert.equal(outcome.status, "success");
    assert.equal(events.filter((e) => e.kind === "permission-request").length, 0);
    const results = events.filter((e): e is EventOf<"tool-result"> => e.kind === "tool-result");
    assert.deepEqual(results.map((r) => [r.tool_call_id, r.is_error]), [["c1", false], ["c2", false], ["c3", true]]);
    assert.equal(results[0]!.result, "Plan updated: 1 of 3 done.");
    assert.match(results[2]!.result, /Invalid input for todo_write/);
    // An invalid call changes no plan: two updates, each the whole list as given.
    const updates = events.filter((e): e is EventOf<"plan-update"> => e.kind === "plan-update");
    assert.deepEqual(updates.map((u) => [u.tool_call_id, u.entries]), [["c1", first], ["c2", second]]);
    // The update follows its call's result.
    assert.equal(events.indexOf(updates[0]!), events.indexOf(results[0]!) + 1);
  });
}

test("todo_write declares itself: kind other, changes nothing, titled by its size", () => {
  const tool = createTools(tempWorkspace().ctx()).find((t) => t.definition.name === "todo_write")!;
  assert.deepEqual(callView(tool, { todos: first }), { tool_kind: "other", mutates: false, title: "Plan (3 items)", locations: [] });
  assert.deepEqual(callView(tool, {}), { tool_kind: "other", mutates: false, title: "Plan (0 items)", locations: [] });
});

test("an empty list clears the plan", async () => {
  const tool = createTools(tempWorkspace().ctx()).find((t) => t.definition.name === "todo_write")!;
  const r = await tool.run({ todos: [] }, { signal: new AbortController().signal });
  assert.deepEqual(r, { content: "Plan cleared.", is_error: false, plan: [] });
});
