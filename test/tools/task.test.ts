import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EventDraft, KeenEvent } from "../../protocol/events.js";
import { embeddedBackend } from "../../app/agent/backend.js";
import { createPermissionGate } from "../../app/agent/permission-gate.js";
import { loadAgents, parseAgent } from "../../app/extensions/agents.js";
import { createTools } from "../../app/tools/index.js";
import { childTools } from "../../app/tools/task.js";
import { JobRegistry } from "../../app/tools/jobs.js";
import type { Tool } from "../../app/tools/tool.js";
import { projectConversation } from "../../storage/projection.js";
import { FakeProvider } from "../fakes/fake-provider.js";
import { stamp } from "../tui/helpers.js";
import { tempWorkspace } from "./helpers.js";

const names = (tools: Tool[] | string) => (typeof tools === "string" ? tools : tools.map((t) => t.definition.name));

test("a child's tools: the parent's read-only ones by default, never task, never one the parent lacks; an agent's list only narrows", () => {
  const parent = createTools(tempWorkspace().ctx());
  assert.ok(names(parent).includes("task"));
  assert.deepEqual(names(childTools(parent, undefined)), ["read_file", "grep", "glob", "list", "skill"]);
  assert.deepEqual(names(childTools(parent, ["bash", "read_file"])), ["bash", "read_file"]);
  // Job control goes with bash: a child without bash reads no background job's output.
  const withJobs = createTools({ ...tempWorkspace().ctx(), jobs: new JobRegistry() });
  assert.deepEqual(names(childTools(withJobs, undefined)), ["read_file", "grep", "glob", "list", "skill"]);
  assert.deepEqual(names(childTools(withJobs, ["bash", "job_output"])), ["bash", "job_output"]);
  assert.deepEqual(names(childTools(withJobs, ["read_file", "job_output"])), ["read_file"]);
  // Naming task (or a tool the parent lacks) is refused, listing what may be named.
  assert.match(names(childTools(parent, ["task"])) as string, /^Unknown tool for the subagent: task\. It may use these of yours: bash, read_file/);
  assert.match(names(childTools(parent.filter((t) => t.definition.name !== "bash"), ["bash"])) as string, /Unknown tool for the subagent: bash/);
  // An agent's tools stand in for the default, minus those the parent lacks (a file written for another tool set).
  assert.deepEqual(names(childTools(parent, undefined, ["edit_file", "grep", "WebFetch"])), ["edit_file", "grep"]);
  assert.deepEqual(names(childTools(parent.filter((t) => t.definition.name !== "edit_file"), undefined, ["edit_file", "grep"])), ["grep"]);
  // A call's list and an agent's list: only what both name.
  assert.deepEqual(names(childTools(parent, ["bash", "grep"], ["grep", "glob"])), ["grep"]);
});

test("agent definitions: frontmatter name, description, tools (Claude Code's names translated), model; the body is the prompt", () => {
  const agent = parseAgent(
    "---\nname: Reviewer\ndescription: Reviews a diff for bugs\ntools: Read, Grep, Bash\nmodel: sonnet\n---\n\nYou review code.\n",
    "x.md", "claude", ".claude/agents/x.md",
  );
  assert.deepEqual(agent, {
    name: "reviewer", prompt: "You review code.", source: "claude", file: ".claude/agents/x.md",
    description: "Reviews a diff for bugs", tools: ["read_file", "grep", "bash"], model: "sonnet",
  });
  // No name: the file's; `inherit` is no model; a YAML list of tools.
  assert.deepEqual(parseAgent("---\nmodel: inherit\ntools:\n  - glob\n---\nFind files.", "finder.md", "project", "f"), {
    name: "finder", prompt: "Find files.", source: "project", file: "f", description: "custom agent (project)", tools: ["glob"],
  });
  assert.equal(parseAgent("---\nname: empty\n---\n  \n", "e.md", "user", "e"), undefined, "no body, no agent");
  assert.equal(parseAgent("---\nname: [unclosed\n---\nBody", "b.md", "user", "b"), undefined, "bad YAML, no agent");
  assert.equal(parseAgent("---\nname: Not A Name!\n---\nBody", "b.md", "user", "b"), undefined);
});

test("agent directories: <config>/agents, then .claude/agents, then .keen/agents; a later one replaces an earlier one's agent of the same name", () => {
  const t = tempWorkspace();
  const config = join(t.home, "keen-config");
  mkdirSync(join(config, "agents"), { recursive: true });
  writeFileSync(join(config, "agents", "a.md"), "---\nname: a\ndescription: user a\n---\nA from the user.");
  writeFileSync(join(config, "agents", "u.md"), "---\ndescription: only the user's\n---\nU.");
  t.write({
    ".claude/agents/a.md": "---\nname: a\ndescription: claude a\n---\nA from .claude.",
    ".claude/agents/c.md": "---\ndescription: claude c\n---\nC.",
    ".keen/agents/c.md": "---\ndescription: keen c\n---\nC from .keen.",
    ".keen/agents/notes.txt": "not an agent",
  });
  const agents = loadAgents(config, t.ws);
  assert.deepEqual(agents.map((a) => [a.name, a.description, a.source, a.file]), [
    ["a", "claude a", "claude", join(".claude", "agents", "a.md")],
    ["c", "keen c", "project", join(".keen", "agents", "c.md")],
    ["u", "only the user's", "user", join(config, "agents", "u.md")],
  ]);
  // The task tool's description lists them for the model.
  const task = createTools({ ...t.ctx(), configDir: config }).find((tool) => tool.definition.name === "task")!;
  assert.match(task.definition.description, /Custom agents \(pass the name as `agent`\):\n- a: claude a\n- c: keen c\n- u: only the user's$/);
});

test("a task call runs the loop again as a child: fresh context, its tools, events tagged with the call, its answer and usage the parent's", async () => {
  const t = tempWorkspace();
  t.write({ "notes.md": "the answer is 42\n" });
  const events: EventDraft[] = [];
  const gate = createPermissionGate({ mode: "ask", interactive: false, newId: () => "r1", emit: async (e) => void events.push(e) });
  const provider = new FakeProvider([
    { toolCalls: [{ id: "p1", name: "task", input: { description: "Find the answer", prompt: "Read notes.md and say the answer." } }], usage: { input_tokens: 100, output_tokens: 10 } },
    { toolCalls: [{ id: "k1", name: "read_file", input: { path: "notes.md" } }], usage: { input_tokens: 20, output_tokens: 2 } },
    { text: "It is 42.", usage: { input_tokens: 30, output_tokens: 3 } },
    { text: "The subagent says 42.", usage: { input_tokens: 200, output_tokens: 20 } },
  ]);
  const outcome = await embeddedBackend(provider).run({
    sessionId: "s1", turnId: "t1", tools: createTools(t.ctx()), system: "parent system", history: [],
    user: { role: "user", content: [{ type: "text", text: "What is the answer?" }], headless: true },
    emit: async (e) => void events.push(e), requester: gate,
    retry: { maxRetries: 0, maxWaitMs: 1000, idleTimeoutMs: 5000, baseDelayMs: 1 },
    signal: new AbortController().signal, sleep: async () => {}, cwd: t.ws, events: [], permissionMode: "ask",
  });
  assert.equal(outcome.status, "success");
  assert.equal(outcome.text, "The subagent says 42.");
  // Every request's tokens, the child's two included.
  assert.equal(outcome.usage.input_tokens, 350);
  assert.equal(outcome.usage.output_tokens, 35);

  const [, childFirst, childSecond, parentSecond] = provider.requests;
  assert.match(childFirst!.system, /^You are a subagent of Keen/);
  assert.match(childFirst!.system, /Tools: read_file, grep, glob, list, skill\./);
  assert.deepEqual(childFirst!.messages, [{ role: "user", content: [{ type: "text", text: "Read notes.md and say the answer." }], headless: true }]);
  assert.deepEqual(childFirst!.tools.map((d) => d.name), ["read_file", "grep", "glob", "list", "skill"]);
  assert.equal(childSecond!.messages.length, 3);
  const answer = parentSecond!.messages.at(-1)!.content[0] as { type: string; content: string };
  assert.deepEqual([answer.type, answer.content], ["tool_result", "It is 42."]);

  // The child's events carry the task call's id; its deltas and its user text's role stay its own.
  const nested = events.filter((e) => "parent_tool_call_id" in e && e.parent_tool_call_id === "p1");
  assert.deepEqual(nested.map((e) => e.kind), [
    "user-message", "text", "tool-use", "assistant-message", "tool-start", "tool-result", "text", "assistant-message", "turn-end",
  ]);
  assert.ok(!nested.some((e) => e.kind === "text-delta" || e.kind === "content-end"), "a child's deltas stay off the bus");
  const parentResult = events.find((e) => e.kind === "tool-result" && e.tool_call_id === "p1")!;
  assert.ok(!("parent_tool_call_id" in parentResult));
  // For UIs: the answer's own lines; no note, the child ended on its own.
  assert.deepEqual([parentResult.kind === "tool-result" && parentResult.details?.output_lines, parentResult.kind === "tool-result" && parentResult.details?.note], [1, undefined]);

  // Stored and projected for a later turn: the parent's conversation only.
  const history = projectConversation(events.map((e) => stamp(e) as KeenEvent));
  assert.deepEqual(history.map((m) => [m.role, m.content.map((b) => (b.type === "text" ? b.text : b.type)).join("")]), [
    ["user", "What is the answer?"],
    ["assistant", "The subagent says 42."],
  ]);
});

test("an interrupt stops the child and its parent: both turns end interrupted, the task call's result says so", async () => {
  const t = tempWorkspace();
  const events: EventDraft[] = [];
  const controller = new AbortController();
  const gate = createPermissionGate({ mode: "ask", interactive: false, newId: () => "r1", emit: async (e) => void events.push(e) });
  const provider = new FakeProvider([
    { toolCalls: [{ id: "p1", name: "task", input: { description: "Wait", prompt: "Take your time." } }] },
    { hang: true },
  ]);
  const outcome = await embeddedBackend(provider).run({
    sessionId: "s1", turnId: "t1", tools: createTools(t.ctx()), system: "parent system", history: [],
    user: { role: "user", content: [{ type: "text", text: "go" }], headless: true },
    emit: async (e) => {
      events.push(e);
      // The user interrupts once the child has begun.
      if (e.kind === "user-message" && "parent_tool_call_id" in e) controller.abort();
    },
    requester: gate, retry: { maxRetries: 0, maxWaitMs: 1000, idleTimeoutMs: 5000, baseDelayMs: 1 },
    signal: controller.signal, sleep: async () => {}, cwd: t.ws, events: [], permissionMode: "ask",
  });
  assert.equal(outcome.status, "interrupted");
  assert.equal(provider.requests.length, 2, "the parent asked nothing more");
  const ends = events.filter((e) => e.kind === "turn-end").map((e) => [e.status, "parent_tool_call_id" in e ? e.parent_tool_call_id : undefined]);
  assert.deepEqual(ends, [["interrupted", "p1"], ["interrupted", undefined]]);
  const result = events.find((e) => e.kind === "tool-result" && e.tool_call_id === "p1");
  assert.deepEqual(result && [result.kind === "tool-result" && result.result, "interrupted" in result && result.interrupted], ["The subagent was interrupted.", true]);
});

test("an agent's model: the child talks to the provider the session resolves it to, priced at its price; a model that cannot be used fails the call before the child starts", async () => {
  const t = tempWorkspace();
  t.write({ ".keen/agents/quick.md": "---\ndescription: quick\nmodel: small\n---\nBe quick.", ".keen/agents/odd.md": "---\ndescription: odd\nmodel: nope\n---\nBe odd." });
  const events: EventDraft[] = [];
  const gate = createPermissionGate({ mode: "ask", interactive: false, newId: () => "r1", emit: async (e) => void events.push(e) });
  const parent = new FakeProvider([
    { toolCalls: [{ id: "p1", name: "task", input: { description: "Quick", prompt: "Quick one.", agent: "quick" } }], usage: { input_tokens: 100, output_tokens: 10 } },
    { toolCalls: [{ id: "p2", name: "task", input: { description: "Odd", prompt: "Odd one.", agent: "odd" } }], usage: { input_tokens: 0, output_tokens: 0 } },
    { text: "Done.", usage: { input_tokens: 0, output_tokens: 0 } },
  ]);
  const small = new FakeProvider([{ text: "quick answer", usage: { input_tokens: 1000, output_tokens: 100 } }]);
  const asked: string[] = [];
  const resolve = async (name: string) => {
    asked.push(name);
    if (name === "small") return { ref: "fake/small", provider: small, price: { input: 1, output: 5 } };
    throw new Error(`unknown model "${name}"`);
  };
  const outcome = await embeddedBackend(parent, { ref: "fake/big", price: { input: 10, output: 100 }, resolve }).run({
    sessionId: "s1", turnId: "t1", tools: createTools({ ...t.ctx(), configDir: undefined }), system: "parent system", history: [],
    user: { role: "user", content: [{ type: "text", text: "go" }], headless: true },
    emit: async (e) => void events.push(e), requester: gate,
    retry: { maxRetries: 0, maxWaitMs: 1000, idleTimeoutMs: 5000, baseDelayMs: 1 },
    signal: new AbortController().signal, sleep: async () => {}, cwd: t.ws, events: [], permissionMode: "ask",
  });
  assert.equal(outcome.status, "success");
  assert.deepEqual(asked, ["small", "nope"]);
  assert.equal(parent.requests.length, 3, "the children's requests went elsewhere");
  assert.deepEqual(small.requests.map((r) => r.messages[0]!.content), [[{ type: "text", text: "Quick one." }]]);
  const results = events.filter((e) => e.kind === "tool-result" && !("parent_tool_call_id" in e)) as Extract<EventDraft, { kind: "tool-result" }>[];
  assert.deepEqual(results.map((r) => [r.tool_call_id, r.is_error, r.result, r.details?.model]), [
    ["p1", false, "quick answer", "fake/small"],
    ["p2", true, `The agent "odd" (${join(".keen", "agents", "odd.md")}) names the model "nope", which cannot be used: unknown model "nope"`, undefined],
  ]);
  // Parent 100 in at $10 and 10 out at $100 ($0.002); child 1000 in at $1 and 100 out at $5 ($0.0015).
  assert.equal(outcome.usage.input_tokens, 1100);
  assert.equal(outcome.costUsd, 0.0035);
});

test("a subagent that used all its steps: its answer reaches the model with Keen's note; the details keep the note apart from the answer's lines", async () => {
  const provider = new FakeProvider([
    { toolCalls: [{ id: "p1", name: "task", input: { description: "Find it", prompt: "Read notes.md.", max_steps: 2 } }] },
    { toolCalls: [{ id: "k1", name: "read_file", input: { path: "notes.md" } }] },
    { text: "Probably 42.\nNot sure." },
    { text: "Done." },
  ]);
  const events = await parentTurn(provider, "What is it?");
  const result = events.find((e): e is Extract<EventDraft, { kind: "tool-result" }> => e.kind === "tool-result" && e.tool_call_id === "p1")!;
  assert.equal(result.result, "Probably 42.\nNot sure.\n\n(The subagent reached its limit of 2 steps.)");
  assert.deepEqual([result.details?.output_lines, result.details?.note], [2, "used all 2 steps"]);
});

/** One parent turn with `provider`, in a workspace holding notes.md, the default tools and an ask-mode gate: its events. */
async function parentTurn(provider: FakeProvider, prompt: string): Promise<EventDraft[]> {
  const t = tempWorkspace();
  t.write({ "notes.md": "the answer is 42\n" });
  const events: EventDraft[] = [];
  const gate = createPermissionGate({ mode: "ask", interactive: false, newId: () => "r1", emit: async (e) => void events.push(e) });
  await embeddedBackend(provider).run({
    sessionId: "s1", turnId: "t1", tools: createTools(t.ctx()), system: "parent system", history: [],
    user: { role: "user", content: [{ type: "text", text: prompt }], headless: true },
    emit: async (e) => void events.push(e), requester: gate,
    retry: { maxRetries: 0, maxWaitMs: 1000, idleTimeoutMs: 5000, baseDelayMs: 1 },
    signal: new AbortController().signal, sleep: async () => {}, cwd: t.ws, events: [], permissionMode: "ask",
  });
  return events;
}
