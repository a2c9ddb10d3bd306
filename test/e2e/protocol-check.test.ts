import { test } from "node:test";
import assert from "node:assert/strict";
import { assertProtocolStream } from "./protocol-check.js";

// The checker must reject what the protocol forbids, or the e2e tests built on it prove nothing.

type Line = Record<string, any>;
const a = { role: "assistant" };
const usage = { input_tokens: 1, cached_tokens: 0, cache_write_tokens: 0, output_tokens: 1, reasoning_tokens: 0, total_tokens: 2 };

function stream(): Line[] {
  const lines: Line[] = [
    { kind: "session-start", model: "anthropic/m", cwd: "/w", tools: ["bash"], protocol_version: 1, resumed: false },
    { kind: "text", role: "user", content: "hi" },
    { kind: "thinking-start", ...a, attempt: 1 },
    { kind: "thinking-delta", ...a, attempt: 1, delta: "lost" },
    { kind: "thinking-end", ...a, attempt: 1 },
    { kind: "text-delta", ...a, attempt: 1, delta: "Lost" },
    { kind: "retry", ...a, attempt: 2, reason: "overloaded", delay_ms: 10 },
    { kind: "thinking-start", ...a, attempt: 2 },
    { kind: "thinking-delta", ...a, attempt: 2, delta: "Hm" },
    { kind: "thinking-end", ...a, attempt: 2 },
    { kind: "text-delta", ...a, attempt: 2, delta: "Hel" },
    { kind: "text-delta", ...a, attempt: 2, delta: "lo" },
    { kind: "content-end", ...a, attempt: 2 },
    { kind: "thinking", ...a, content: "Hm" },
    { kind: "text", ...a, content: "Hello" },
    { kind: "memory", ...a, content: "- noted" },
    { kind: "tool-use", ...a, tool_name: "bash", tool_call_id: "c1", input: "{}" },
    { kind: "tool-update", ...a, tool_name: "bash", tool_call_id: "c1", tail: "x", total_bytes: 1 },
    { kind: "tool-result", ...a, tool_name: "bash", tool_call_id: "c1", result: "x", is_error: false },
    {
      kind: "result", session_id: "s1", opencode_session_id: "s1", text: "Hello", status: "success", is_error: false,
      errors: [], num_turns: 1, duration_ms: 5, usage,
    },
  ];
  return lines.map((l, seq) => ({ ...l, conversation_id: "s1", ts: 1000 + seq, seq }));
}

const renumber = (lines: Line[]) => lines.map((l, seq) => ({ ...l, seq }));
const without = (kind: string) => renumber(stream().filter((l) => l.kind !== kind));
const edit = (seq: number, patch: Line) => stream().map((l) => (l.seq === seq ? { ...l, ...patch } : l));

test("the checker accepts a well-formed stream", () => {
  assert.equal(assertProtocolStream(stream(), { deltas: true }).kind, "result");
});

const broken: [string, () => Line[], boolean?][] = [
  ["a seq gap", () => stream().map((l) => (l.seq > 3 ? { ...l, seq: l.seq + 1 } : l))],
  ["session-start not first", () => renumber([stream()[1]!, stream()[0]!, ...stream().slice(2)])],
  ["no result", () => stream().slice(0, -1)],
  ["two results", () => renumber([...stream(), stream().at(-1)!])],
  ["a line after result", () => renumber([...stream(), stream()[1]!])],
  ["a complete text that is not its deltas", () => edit(14, { content: "Hellx" })],
  ["a complete text holding the failed attempt", () => edit(14, { content: "LostHello" })],
  ["a delta of the old attempt after the retry", () => edit(11, { attempt: 1 })],
  ["a text block without content-end", () => without("content-end")],
  ["a complete thinking that is not its deltas", () => edit(13, { content: "Hmm" })],
  ["a tool-result without its tool-use", () => without("tool-use")],
  ["a tool-result with another id", () => edit(18, { tool_call_id: "c2" })],
  ["a field the schema does not know", () => edit(15, { surprise: true })],
  ["a missing field", () => stream().map((l) => (l.kind === "tool-result" ? { ...l, is_error: undefined } : l))],
  ["delta kinds without --stream-deltas", () => stream(), false],
];
for (const [name, make, deltas] of broken) {
  test(`the checker rejects ${name}`, () => {
    assert.throws(() => assertProtocolStream(JSON.parse(JSON.stringify(make())), { deltas: deltas ?? true }), assert.AssertionError);
  });
}
