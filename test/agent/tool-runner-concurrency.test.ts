import { test } from "node:test";
import assert from "node:assert/strict";
import * as z from "zod";
import type { EventDraft } from "../../protocol/events.js";
import { MAX_CONCURRENT_CALLS, runToolCalls } from "../../app/agent/tool-runner.js";
import { defineTool } from "../../app/tools/define.js";

/*
 * Calls of `concurrent` tools run at once, at most MAX_CONCURRENT_CALLS, and an ordinary call
 * waits for those before it. Each call here finishes only when the test releases it, so what
 * is running at any moment is known exactly (no timing).
 */
test("concurrent calls start together up to the bound; an ordinary call waits for them; results stay in call order", async () => {
  const running = new Set<string>();
  const waiting = new Map<string, () => void>();
  let most = 0;
  let started: () => void = () => {};
  const run = async ({ id }: { id: string }) => {
    running.add(id);
    most = Math.max(most, running.size);
    started();
    await new Promise<void>((resolve) => waiting.set(id, resolve));
    running.delete(id);
    return { content: `done ${id}`, is_error: false };
  };
  const input = z.object({ id: z.string() });
  const slow = defineTool("slow", "d", input, run, { kind: "other", mutates: false, concurrent: true });
  const plain = defineTool("plain", "d", input, run, { kind: "read" });
  const calls = ["a", "b", "c", "d"].map((id) => ({ id, name: "slow", input: { id } }));
  calls.push({ id: "e", name: "plain", input: { id: "e" } });
  const events: EventDraft[] = [];
  const done = runToolCalls(calls, {
    tools: [slow, plain], requester: { request: async () => ({ allow: true }) },
    emit: async (e) => void events.push(e), signal: new AbortController().signal,
  });
  const until = async (check: () => boolean) => {
    while (!check()) await new Promise<void>((resolve) => (started = resolve));
  };
  await until(() => running.size === MAX_CONCURRENT_CALLS);
  assert.deepEqual([...running], ["a", "b", "c"], "the fourth waits for a free place");
  waiting.get("b")!();
  await until(() => running.has("d"));
  assert.deepEqual([...running].sort(), ["a", "c", "d"]);
  for (const id of ["a", "c", "d"]) waiting.get(id)!();
  await until(() => running.has("e"));
  assert.deepEqual([...running], ["e"], "the ordinary call ran alone, after the concurrent ones");
  waiting.get("e")!();
  const blocks = await done;
  assert.equal(most, MAX_CONCURRENT_CALLS);
  assert.deepEqual(blocks.map((b) => b.type === "tool_result" && b.tool_call_id), ["a", "b", "c", "d", "e"]);
  assert.deepEqual(events.filter((e) => e.kind === "tool-result").map((e) => e.kind === "tool-result" && e.tool_call_id), ["b", "a", "c", "d", "e"]);
});
