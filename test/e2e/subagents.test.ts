import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";
import { startStdio } from "./stdio-client.js";

/*
 * Subagents through bin/keen. The scripted model answers by request content (`match`): a
 * child's requests carry its own prompt and nothing of the parent's, so the order in which
 * parallel children ask does not matter. Each child's first reply waits (`waitFor`) until the
 * other child has asked: a runner that ran the two task calls one after the other would hang
 * there, so these tests pass only when the children run at the same time.
 */
const server = useMockLLMServer();
const MODEL = "anthropic/claude-test";
const texts = (message: { content: { type: string; text?: string }[] }) => message.content.map((b) => b.text ?? `[${b.type}]`).join("");

test("two task calls in one step run at once; their events nest under their calls in the JSON lines; their answers reach the parent; resume leaves them out", async () => {
  const sb = makeSandbox(server.url);
  writeFileSync(join(sb.workspace, "alpha.txt"), "alpha: ONE\n");
  writeFileSync(join(sb.workspace, "beta.txt"), "beta: TWO\n");
  server.enqueue(
    {
      match: "PARENT-Q", usage: { input: 100, output: 10 },
      toolCalls: [
        { id: "toolu_task_a", name: "task", input: { description: "Read alpha", prompt: "CHILD-A: what does alpha.txt say?" } },
        { id: "toolu_task_b", name: "task", input: { description: "Read beta", prompt: "CHILD-B: what does beta.txt say?" } },
      ],
    },
    { match: "CHILD-A", waitFor: "CHILD-B", usage: { input: 1, output: 1 }, toolCalls: [{ id: "toolu_a_read", name: "read_file", input: { path: "alpha.txt" } }] },
    { match: "CHILD-A", usage: { input: 2, output: 1 }, text: "alpha.txt says ONE" },
    { match: "CHILD-B", waitFor: "CHILD-A", usage: { input: 3, output: 1 }, toolCalls: [{ id: "toolu_b_read", name: "read_file", input: { path: "beta.txt" } }] },
    { match: "CHILD-B", usage: { input: 4, output: 1 }, text: "beta.txt says TWO" },
    { match: "PARENT-Q", usage: { input: 200, output: 20 }, text: "Alpha says ONE, beta says TWO." },
  );
  const r = await sb.run(["run", "--headless", "--model", MODEL, "PARENT-Q: what do the two files say?"], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(server.unexpected, []);
  assert.equal(server.pending(), 0);
  const lines = parseLines(r.stdout);

  // The parent's own stream: two task calls, their results (in the order they finished), its answer.
  const own = lines.filter((l) => l.parent_tool_call_id === undefined);
  assert.deepEqual(own.map((l) => l.kind), ["session-start", "text", "tool-use", "tool-use", "tool-result", "tool-result", "text", "result"]);
  assert.ok(own[0]!.tools.includes("task"));
  assert.deepEqual(own.slice(2, 4).map((l) => [l.tool_name, l.tool_kind, l.mutates, l.title]), [
    ["task", "other", false, "Task: Read alpha"], ["task", "other", false, "Task: Read beta"],
  ]);
  const results = Object.fromEntries(own.filter((l) => l.kind === "tool-result").map((l) => [l.tool_call_id, [l.is_error, l.result]]));
  assert.deepEqual(results, { toolu_task_a: [false, "alpha.txt says ONE"], toolu_task_b: [false, "beta.txt says TWO"] });

  // Each child's stream, nested under its call: its task, its read, its answer.
  for (const [parent, prompt, read, file, answer] of [
    ["toolu_task_a", "CHILD-A: what does alpha.txt say?", "toolu_a_read", "alpha: ONE\n", "alpha.txt says ONE"],
    ["toolu_task_b", "CHILD-B: what does beta.txt say?", "toolu_b_read", "beta: TWO\n", "beta.txt says TWO"],
  ] as const) {
    const nested = lines.filter((l) => l.parent_tool_call_id === parent);
    assert.deepEqual(nested.map((l) => [l.kind, l.role, l.tool_call_id]), [
      ["text", "user", undefined], ["tool-use", "assistant", read], ["tool-result", "assistant", read], ["text", "assistant", undefined],
    ]);
    assert.deepEqual([nested[0]!.content, nested[3]!.content], [prompt, answer]);
    assert.ok(nested[2]!.result.includes(file.trim()), nested[2]!.result);
  }
  // Every line is in the stream exactly once: the parent's and the two children's.
  assert.equal(own.length + lines.filter((l) => l.parent_tool_call_id !== undefined).length, lines.length);

  // Children started from a fresh context: their first request is their prompt alone, with read-only tools and no task.
  const childFirst = server.requests.find((q) => JSON.stringify(q.body).includes("CHILD-A"))!.body;
  assert.deepEqual(childFirst.messages.map(texts), ["CHILD-A: what does alpha.txt say?"]);
  assert.deepEqual(childFirst.tools.map((t: { name: string }) => t.name), ["read_file", "grep", "glob", "list", "skill"]);
  assert.match(childFirst.system.map?.((b: { text: string }) => b.text).join("") ?? childFirst.system, /^You are a subagent of Keen/);

  // The parent's next request: both answers as the task calls' results, in the order of the calls.
  const last = server.requests.at(-1)!.body;
  const answered = last.messages.at(-1).content.map((b: { tool_use_id: string; content: unknown }) => [b.tool_use_id, JSON.stringify(b.content)]);
  assert.deepEqual(answered.map((a: string[]) => a[0]), ["toolu_task_a", "toolu_task_b"]);
  assert.ok(answered[0][1].includes("alpha.txt says ONE") && answered[1][1].includes("beta.txt says TWO"), JSON.stringify(answered));

  // The turn's usage is every request's, the children's included.
  const result = lines.at(-1)!;
  assert.equal(result.usage.input_tokens, 310);
  assert.equal(result.usage.output_tokens, 34);

  // The store keeps the children's events, nested.
  const stored = (await sb.show(result.session_id)).events;
  assert.deepEqual(stored.filter((e) => e.kind === "tool-use").map((e) => [e.tool_call_id, e.parent_tool_call_id]).sort(), [
    ["toolu_a_read", "toolu_task_a"], ["toolu_b_read", "toolu_task_b"], ["toolu_task_a", undefined], ["toolu_task_b", undefined],
  ]);

  // Resumed: the model gets the parent's conversation, none of the children's messages.
  server.enqueue({ match: "AGAIN", text: "Still ONE and TWO." });
  const next = await sb.run(["run", "--no-stdin", "--model", MODEL, "--session", result.session_id, "AGAIN: and now?"]);
  assert.equal(next.code, 0, next.stderr);
  const resumed = server.requests.at(-1)!.body.messages;
  assert.deepEqual(resumed.map((m: { role: string; content: { type: string; text?: string }[] }) => [m.role, texts(m)]), [
    ["user", "PARENT-Q: what do the two files say?"],
    ["assistant", "Alpha says ONE, beta says TWO."],
    ["user", "AGAIN: and now?"],
  ]);
});

test("a subagent's write asks through the parent's permission flow over stdio, nested under its task call", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue(
    { match: "PARENT-W", toolCalls: [{ id: "toolu_task_w", name: "task", input: { description: "Write a file", prompt: "CHILD-W: write out.txt", tools: ["write_file"] } }] },
    { match: "CHILD-W", toolCalls: [{ id: "toolu_w_write", name: "write_file", input: { path: "out.txt", content: "hello\n" } }] },
    { match: "CHILD-W", text: "Wrote out.txt." },
    { match: "PARENT-W", text: "The subagent wrote out.txt." },
  );
  const client = startStdio(["--model", MODEL, "--permission-mode", "ask"], sb.env, sb.workspace, 60_000);
  client.send({ kind: "prompt", id: "p1", text: "PARENT-W: have a subagent write out.txt" });
  const ask = await client.next((l) => l.kind === "permission-request");
  assert.deepEqual([ask.tool_name, ask.tool_call_id, ask.parent_tool_call_id, ask.tool_kind, ask.path], [
    "write_file", "toolu_w_write", "toolu_task_w", "edit", join(sb.workspace, "out.txt"),
  ]);
  assert.match(ask.diff, /\+hello/);
  client.send({ kind: "permission-response", id: "a1", request_id: ask.request_id, decision: "allow-once" });
  const answer = await client.response("p1");
  assert.equal(answer.ok, true, JSON.stringify(answer));
  assert.equal(readFileSync(join(sb.workspace, "out.txt"), "utf8"), "hello\n");
  const write = client.lines.find((l) => l.kind === "tool-result" && l.tool_call_id === "toolu_w_write")!;
  assert.deepEqual([write.is_error, write.parent_tool_call_id], [false, "toolu_task_w"]);
  const task = client.lines.find((l) => l.kind === "tool-result" && l.tool_call_id === "toolu_task_w")!;
  assert.deepEqual([task.is_error, task.result, task.parent_tool_call_id], [false, "Wrote out.txt.", undefined]);
  assert.deepEqual(server.unexpected, []);
  const { code, stderr } = await client.end();
  assert.equal(code, 0, stderr);
});
