import { test } from "node:test";
import assert from "node:assert/strict";
import type { EventDraft } from "../../protocol/events.js";
import { TranscriptCache, transcriptWindow } from "../../app/tui/views/transcript.js";
import { FOLLOW } from "../../app/tui/views/window.js";
import { loadTheme } from "../../themes/index.js";
import { plain, viewOf, viewOfCall } from "./helpers.js";

const nested = { parent_tool_call_id: "p1" };
const task = { description: "Find the answer", prompt: "Read a.txt" };
/** A turn whose one call is a task: its child reads a file (after asking), speaks, and answers. */
const start: EventDraft[] = [
  { kind: "text", role: "user", content: "go" },
  { kind: "tool-use", role: "assistant", tool_name: "task", tool_call_id: "p1", input: JSON.stringify(task), ...viewOfCall("task", task) },
  { kind: "tool-start", role: "assistant", tool_name: "task", tool_call_id: "p1" },
  { kind: "text", role: "user", content: "Read a.txt", ...nested },
  { kind: "tool-use", role: "assistant", tool_name: "read_file", tool_call_id: "k1", input: '{"path":"a.txt"}', ...viewOfCall("read_file", { path: "a.txt" }), ...nested },
  { kind: "permission-request", role: "assistant", request_id: "r1", tool_name: "read_file", tool_call_id: "k1", input: '{"path":"a.txt"}', ...nested },
];
const rest: EventDraft[] = [
  { kind: "tool-start", role: "assistant", tool_name: "read_file", tool_call_id: "k1", ...nested },
  { kind: "tool-result", role: "assistant", tool_name: "read_file", tool_call_id: "k1", result: "1\t42", is_error: false, ...nested },
  { kind: "text", role: "assistant", content: "It says 42.\nSo: 42.", ...nested },
  { kind: "tool-result", role: "assistant", tool_name: "task", tool_call_id: "p1", result: "It says 42.\nSo: 42.", is_error: false, duration_ms: 1200 },
];

function screen(events: EventDraft[], outputExpanded: boolean): string[] {
  const view = viewOf(events);
  const ctx = { theme: loadTheme("dark", {}), width: 60, now: 0, thinkingExpanded: false, outputExpanded };
  return plain(transcriptWindow(view, ctx, new TranscriptCache(), FOLLOW, 30).lines);
}

test("a subagent's calls fold under its task line: live while it runs, counted once it ended, whole with Ctrl-O; its text is not the answer", () => {
  const waiting = viewOf(start);
  // The child's permission request is the session's to answer, as any other.
  assert.deepEqual(waiting.permissions.map((p) => [p.request_id, p.tool_call_id]), [["r1", "k1"]]);
  assert.deepEqual(waiting.items.map((i) => i.type), ["user", "tool"], "one transcript item for the task; the child's prompt and calls are not items");
  // The running call's clock reads from its tool-start; only the lines matter here.
  assert.deepEqual(screen(start, false).slice(2).map((l) => l.replace(/ running \d+m?s$/, " running")), [
    "⠋ Task: Find the answer running", "  │ ? Read a.txt needs approval",
  ]);

  const done = viewOf([...start, ...rest]);
  assert.deepEqual(done.items.map((i) => i.type), ["user", "tool"]);
  assert.equal(done.lastAnswer, "", "a child's text is not the session's answer");
  assert.deepEqual(screen([...start, ...rest], false).slice(2), [
    "✓ Task: Find the answer ok 1.2s",
    "  ⎿ subagent: 1 tool call, answer 2 lines (Ctrl-O shows)",
  ]);
  assert.deepEqual(screen([...start, ...rest], true).slice(2), [
    "✓ Task: Find the answer ok 1.2s",
    "  │ ✓ Read a.txt ok",
    "  │ It says 42.",
    "  │ So: 42.",
  ]);
});

test("a task's folded line counts its answer, not Keen's words: an interrupted task has no answer; one that used all its steps says so", () => {
  const ended = (result: string, extra: Record<string, unknown>) =>
    screen([...start, ...rest.slice(0, -1), { kind: "tool-result", role: "assistant", tool_name: "task", tool_call_id: "p1", result, duration_ms: 1200, ...extra } as EventDraft], false).slice(2);
  assert.deepEqual(ended("The subagent was interrupted.", { is_error: true, interrupted: true }), [
    "- Task: Find the answer interrupted 1.2s",
    "  ⎿ subagent: 1 tool call, no answer (Ctrl-O shows)",
  ]);
  const [head, folded] = ended("It says 42.\n\n(The subagent reached its limit of 8 steps.)", { is_error: false, details: { output_lines: 1, note: "used all 8 steps" } });
  assert.equal(head, "✓ Task: Find the answer ok 1.2s");
  assert.match(folded!, /^ {2}⎿ subagent: 1 tool call, answer 1 line, used all 8 steps\b/);
});

test("a task whose agent names a model shows that model on its line while it runs (the call's title, model first so a narrow line keeps it)", () => {
  const title = "Task (quick · anthropic/claude-haiku-5-5): Find the answer";
  const running: EventDraft[] = [
    { kind: "text", role: "user", content: "go" },
    { kind: "tool-use", role: "assistant", tool_name: "task", tool_call_id: "p1", input: JSON.stringify({ ...task, agent: "quick" }), tool_kind: "other", mutates: false, title, locations: [] },
    { kind: "tool-start", role: "assistant", tool_name: "task", tool_call_id: "p1" },
  ];
  assert.deepEqual(screen(running, false).slice(2).map((l) => l.replace(/ running \d+m?s$/, " running")), ["⠋ Task (quick · anthropic/claude-haiku-5-5): F… running"]);
  const ended: EventDraft = { kind: "tool-result", role: "assistant", tool_name: "task", tool_call_id: "p1", result: "42", is_error: false, duration_ms: 1200, details: { agent: "quick", model: "anthropic/claude-haiku-5-5" } };
  assert.equal(screen([...running, ended], false)[2], "✓ Task (quick · anthropic/claude-haiku-5-5): Find … ok 1.2s");
});
