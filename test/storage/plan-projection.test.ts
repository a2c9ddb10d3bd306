import { test } from "node:test";
import assert from "node:assert/strict";
import type { KeenEvent } from "../../protocol/events.js";
import { latestPlan, projectConversation } from "../../storage/projection.js";

const base = { conversation_id: "s", ts: 0 };
const turn = (id: string, ask: string, answer: string): KeenEvent[] => [
  { kind: "user-message", ...base, turn_id: id, message: { role: "user", content: [{ type: "text", text: ask }] } },
  { kind: "assistant-message", ...base, turn_id: id, message: { role: "assistant", content: [{ type: "text", text: answer }] } },
  { kind: "turn-end", ...base, turn_id: id, status: "success", steps: 1 },
];
const plan = (entries: { content: string; status: "pending" | "in_progress" | "completed" }[]): KeenEvent =>
  ({ kind: "plan-update", ...base, role: "assistant", tool_call_id: "c", entries });

test("the latest plan-update is the session's plan, and closes the projected conversation's last answer", () => {
  const events = [
    ...turn("t1", "plan", "Planned."), plan([{ content: "old", status: "pending" }]),
    ...turn("t2", "go on", "Working."), plan([{ content: "Read", status: "completed" }, { content: "Fix", status: "in_progress" }, { content: "Test", status: "pending" }]),
  ];
  assert.deepEqual(latestPlan(events)?.map((e) => e.content), ["Read", "Fix", "Test"]);
  const conversation = projectConversation(events);
  assert.deepEqual(conversation.map((m) => m.content[0]!.type === "text" && m.content[0]!.text), [
    "plan", "Planned.", "go on", "Working.\n\n[plan, as last written with todo_write]\n[x] Read\n[~] Fix\n[ ] Test",
  ]);
});

test("no plan, or a cleared one: the conversation is untouched", () => {
  const events = turn("t1", "hi", "Hello.");
  assert.equal(latestPlan(events), undefined);
  const texts = (e: KeenEvent[]) => projectConversation(e).map((m) => m.content[0]!.type === "text" && m.content[0]!.text);
  assert.deepEqual(texts(events), ["hi", "Hello."]);
  assert.deepEqual(texts([...events, plan([])]), ["hi", "Hello."]);
});
