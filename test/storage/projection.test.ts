import { test } from "node:test";
import assert from "node:assert/strict";
import type { EventOf, KeenEvent } from "../../protocol/events.js";
import type { ContentBlock, Message } from "../../protocol/messages.js";
import { projectConversation } from "../../storage/projection.js";

const base = { conversation_id: "s", ts: 0 };
type Status = EventOf<"turn-end">["status"];

function user(turn: string, text: string, headless?: boolean): KeenEvent {
  const message: Message = { role: "user", content: [{ type: "text", text }], ...(headless === undefined ? {} : { headless }) };
  return { kind: "user-message", ...base, turn_id: turn, message };
}
function step(turn: string, ...content: ContentBlock[]): KeenEvent {
  return { kind: "assistant-message", ...base, turn_id: turn, message: { role: "assistant", content } };
}
function end(turn: string, status: Status, steps = 1): KeenEvent {
  return { kind: "turn-end", ...base, turn_id: turn, status, steps };
}
const text = (t: string): ContentBlock => ({ type: "text", text: t });
const reply = (t: string): Message => ({ role: "assistant", content: [text(t)] });

function assertAlternates(conversation: Message[]) {
  conversation.forEach((m, i) => assert.equal(m.role, i % 2 === 0 ? "user" : "assistant"));
  assert.equal(conversation.length % 2, 0);
}

test("normal turns: user message as stored, one assistant text per turn", () => {
  const events = [
    user("t1", "hi", true),
    { kind: "text", ...base, role: "user", content: "hi" } as KeenEvent,
    step("t1", text("hello")),
    end("t1", "success"),
    user("t2", "again", false),
    step("t2", text("one")),
    end("t2", "max_turns"),
  ];
  assert.deepEqual(projectConversation(events), [
    { role: "user", content: [text("hi")], headless: true },
    reply("hello"),
    { role: "user", content: [text("again")], headless: false },
    reply("one"),
  ]);
});

test("steps are joined, memory kept verbatim, thinking and tool calls dropped", () => {
  const memory = "<keen_memory>\nuser prefers tabs\n</keen_memory>";
  const events: KeenEvent[] = [
    user("t1", "fix it", true),
    step(
      "t1",
      { type: "thinking", thinking: "let me look", signature: "sig" },
      text("Looking."),
      { type: "tool_call", id: "c1", name: "read_file", input: { path: "a.ts" } },
    ),
    { kind: "tool-use", ...base, role: "assistant", tool_name: "read_file", tool_call_id: "c1", input: "{}" },
    { kind: "tool-result", ...base, role: "assistant", tool_name: "read_file", tool_call_id: "c1", result: "x", is_error: false },
    { kind: "prompt-injection", ...base, turn_id: "t1", step: 2, name: "max-turns", text: "wrap up" },
    step("t1", { type: "redacted_thinking", data: "zzz" }, text(`Done.\n\n${memory}`)),
    end("t1", "success", 2),
  ];
  const conversation = projectConversation(events);
  assert.deepEqual(conversation[1], reply(`Looking.\n\nDone.\n\n${memory}`));
  assert.equal(conversation.length, 2);
});

test("failed, interrupted and unfinished turns are closed with markers", () => {
  const events: KeenEvent[] = [
    user("t1", "a"), step("t1", text("partial")), end("t1", "error"),
    user("t2", "b"), end("t2", "interrupted"),
    user("t3", "c"), step("t3", text("half")), end("t3", "interrupted"),
    user("t4", "d"), step("t4", { type: "tool_call", id: "x", name: "bash", input: {} }), end("t4", "success"),
    user("t5", "e"), step("t5", text("killed mid-way")),
  ];
  const conversation = projectConversation(events);
  assertAlternates(conversation);
  assert.deepEqual(
    conversation.filter((m) => m.role === "assistant"),
    [
      reply("partial\n\n[turn error]"),
      reply("[turn interrupted]"),
      reply("half\n\n[turn interrupted]"),
      reply("[no text]"),
      reply("killed mid-way\n\n[turn interrupted]"),
    ],
  );
});

test("a turn that never ended and had no text is just the marker; orphans are ignored", () => {
  const events: KeenEvent[] = [
    step("ghost", text("no user message for me")),
    end("ghost", "success"),
    user("t1", "go"),
  ];
  assert.deepEqual(projectConversation(events), [{ role: "user", content: [text("go")] }, reply("[turn interrupted]")]);
  assert.deepEqual(projectConversation([]), []);
});

test("alternation holds for a long mixed history", () => {
  const statuses: Array<Status | undefined> = ["success", "error", undefined, "interrupted", "max_turns"];
  const events: KeenEvent[] = [];
  for (let i = 0; i < 50; i++) {
    const turn = `t${i}`;
    events.push(user(turn, `q${i}`, i % 2 === 0));
    if (i % 3 !== 0) events.push(step(turn, text(`a${i}`)));
    const status = statuses[i % statuses.length];
    if (status) events.push(end(turn, status));
  }
  const conversation = projectConversation(events);
  assert.equal(conversation.length, 100);
  assertAlternates(conversation);
  for (const m of conversation) assert.equal(m.content.length, 1);
});

test("a context replacement replaces what came before it; a turn it happened in continues after it", () => {
  const summary: Message = { role: "user", content: [text("SUMMARY")], headless: true };
  const ack = reply("ok");
  const mid: KeenEvent = { kind: "context-replacement", ...base, turn_id: "t2", trigger: "auto", messages: [summary, ack, { role: "user", content: [text("second")], headless: true }] };
  const events = [
    user("t1", "first", true), step("t1", text("one")), end("t1", "success"),
    user("t2", "second", true), mid, step("t2", text("two")), end("t2", "success"),
    user("t3", "third", true), step("t3", text("three")), end("t3", "success"),
  ];
  const conversation = projectConversation(events);
  assert.deepEqual(conversation, [summary, ack, { role: "user", content: [text("second")], headless: true }, reply("two"), { role: "user", content: [text("third")], headless: true }, reply("three")]);
  assertAlternates(conversation);
  // A manual compaction between turns: no turn continues.
  const manual: KeenEvent = { kind: "context-replacement", ...base, trigger: "manual", messages: [summary, ack] };
  assert.deepEqual(projectConversation([...events, manual, user("t4", "fourth"), step("t4", text("four")), end("t4", "success")]), [
    summary, ack, { role: "user", content: [text("fourth")] }, reply("four"),
  ]);
});
