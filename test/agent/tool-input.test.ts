import { test } from "node:test";
import assert from "node:assert/strict";
import type { EventDraft } from "../../protocol/events.js";
import { checkToolInput, MAX_INPUT_CHARS, MAX_INPUT_DEPTH } from "../../app/agent/tool-input.js";
import { runTurn } from "../../app/agent/turn.js";
import type { Tool } from "../../app/tools/tool.js";
import { approveAll } from "../fakes/approve-all.js";
import { FakeProvider } from "../fakes/fake-provider.js";

/** `[[…[leaf]…]]` nested `depth` times, built without recursion. */
function nested(depth: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

test("inputs within the limits pass; deeper or larger ones are refused without recursing", () => {
  assert.equal(checkToolInput({ path: "a", options: { deep: [1, { x: "y" }] } }), undefined);
  assert.equal(checkToolInput({ a: nested(MAX_INPUT_DEPTH - 1) }), undefined);
  assert.equal(checkToolInput({ a: nested(MAX_INPUT_DEPTH) }), `it nests deeper than ${MAX_INPUT_DEPTH} levels`);
  // Deep enough that any recursive walk (JSON.stringify, structuredClone, zod, ajv) overflows the stack.
  const deep = JSON.parse(`{"pattern":${"[".repeat(100_000)}${"]".repeat(100_000)}}`);
  assert.throws(() => JSON.stringify(deep), RangeError, "the attack really overflows a recursive walk");
  assert.equal(checkToolInput(deep), `it nests deeper than ${MAX_INPUT_DEPTH} levels`);
  let chain: Record<string, unknown> = {};
  for (let i = 0; i < 100_000; i++) chain = { a: chain };
  assert.match(checkToolInput(chain)!, /nests deeper/);
  assert.equal(checkToolInput({ content: "x".repeat(MAX_INPUT_CHARS - 16) }), undefined);
  assert.equal(checkToolInput({ content: "x".repeat(MAX_INPUT_CHARS + 1) }), "it is larger than 8 MB");
  assert.equal(checkToolInput(Array.from({ length: 9 }, () => "y".repeat(1024 * 1024))), "it is larger than 8 MB");
  // Each number counts one: 2,000 of them take a text 1,000 short of the limit over it (without them it
  // passes). An array of 8 M numbers showed the same and cost 3.5 s of CPU.
  const short = "x".repeat(MAX_INPUT_CHARS - 1000);
  assert.equal(checkToolInput({ content: short, numbers: new Array(10).fill(0) }), undefined);
  assert.equal(checkToolInput({ content: short, numbers: new Array(2000).fill(0) }), "it is larger than 8 MB");
  for (const odd of [null, 1, "text", true, []]) assert.equal(checkToolInput(odd), undefined);
});

test("a turn answers a too-deep tool call with an error result, never runs the tool, and can still send and store the step", async () => {
  let ran = 0;
  const tool: Tool = {
    definition: { name: "echo", description: "echo", inputSchema: { type: "object" } },
    async run() {
      ran++;
      return { content: "ran", is_error: false };
    },
  };
  const deep = { value: nested(100_000) };
  const provider = new FakeProvider([
    { toolCalls: [{ id: "deep", name: "echo", input: deep }, { id: "fine", name: "echo", input: { x: 1 } }] },
    { text: "done" },
  ]);
  const events: EventDraft[] = [];
  const outcome = await runTurn({
    sessionId: "s1", turnId: "t1", provider, tools: [tool], system: "sys", history: [],
    user: { role: "user", content: [{ type: "text", text: "hi" }] },
    emit: async (e) => void events.push(structuredClone(e)), requester: approveAll,
    retry: { maxRetries: 0, maxWaitMs: 0, idleTimeoutMs: 1000, baseDelayMs: 1 },
    signal: new AbortController().signal,
  });
  assert.equal(outcome.status, "success");
  assert.equal(ran, 1, "only the valid call ran");
  const uses = events.filter((e) => e.kind === "tool-use").map((e) => [e.tool_call_id, e.input]);
  assert.deepEqual(uses, [["deep", "{}"], ["fine", '{"x":1}']]);
  const results = events.filter((e) => e.kind === "tool-result").map((e) => [e.tool_call_id, e.result, e.is_error]);
  assert.deepEqual(results, [
    ["deep", `Invalid input for echo: it nests deeper than ${MAX_INPUT_DEPTH} levels; the call was not executed.`, true],
    ["fine", "ran", false],
  ]);
  const stored = events.find((e) => e.kind === "assistant-message")!;
  assert.deepEqual(stored.message.content, [
    { type: "tool_call", id: "deep", name: "echo", input: {} },
    { type: "tool_call", id: "fine", name: "echo", input: { x: 1 } },
  ]);
  assert.equal(provider.requests.length, 2, "the next request (structuredClone'd by the fake) went out");
});
