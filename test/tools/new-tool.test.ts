import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";
import type { CommandOf } from "../../protocol/commands.js";
import type { EventDraft, EventOf } from "../../protocol/events.js";
import { permissionToolCall, toolCallStarted } from "../../app/acp/updates.js";
import { createPermissionGate } from "../../app/agent/permission-gate.js";
import { runTurn } from "../../app/agent/turn.js";
import { planUndoStep } from "../../app/agent/checkpoints.js";
import { defineTool, locationOf, pathHelpers, strArg } from "../../app/tools/define.js";
import type { Tool, ToolContext } from "../../app/tools/tool.js";
import { FakeProvider } from "../fakes/fake-provider.js";
import { plain, stamp, viewOf } from "../tui/helpers.js";
import { TranscriptCache, transcriptWindow } from "../../app/tui/views/transcript.js";
import { FOLLOW } from "../../app/tui/views/window.js";
import { loadTheme } from "../../themes/index.js";
import { tempWorkspace } from "./helpers.js";

/*
 * "A new tool is one file plus one line in the tools index": three tools nobody in app/ has
 * heard of, one of each kind that matters to the gate (an edit, a command outside the sandbox,
 * a read), written as a tool file would write them. The permission gate, the TUI, ACP and undo
 * handle them from their declarations alone.
 */
function newTools(ctx: ToolContext): Tool[] {
  const paths = pathHelpers(ctx);
  const appendNote = defineTool("append_note", "Appends a line to a file.", z.object({ path: z.string(), line: z.string() }), async ({ path, line }) => {
    const file = paths.resolve(path);
    const before = readFileSync(file, "utf8");
    writeFileSync(file, `${before}${line}\n`);
    return { content: `Appended to ${path}`, is_error: false, details: { path: file, old_text: before, new_text: `${before}${line}\n` } };
  }, { kind: "edit", describe: (args) => ({ title: `Append to ${strArg(args, "path") ?? "a file"}`, locations: locationOf(paths, strArg(args, "path")) }) });
  const runPython = defineTool("run_python", "Runs Python code.", z.object({ code: z.string() }), async ({ code }) => ({ content: `ran ${code}`, is_error: false }), {
    kind: "exec", describe: (args) => ({ title: strArg(args, "code") ?? "python", locations: [] }),
  });
  const countWords = defineTool("count_words", "Counts the words of a file.", z.object({ path: z.string() }), async ({ path }) => ({
    content: String(readFileSync(paths.resolve(path), "utf8").split(/\s+/).filter(Boolean).length), is_error: false,
  }), { kind: "read", describe: (args) => ({ title: `Count words in ${strArg(args, "path") ?? "a file"}`, locations: locationOf(paths, strArg(args, "path")) }) });
  return [appendNote, runPython, countWords];
}

test("a new tool of an existing kind: the gate, the TUI, ACP and undo go by its declaration, with no edit of theirs", async () => {
  const t = tempWorkspace();
  t.write({ "notes.md": "one\n" });
  const ctx = t.ctx();
  const events: EventDraft[] = [];
  let ids = 0;
  const gate = createPermissionGate({
    mode: "accept-edits", interactive: true, newId: () => `r${++ids}`,
    emit: async (event) => {
      events.push(event);
      // The user allows whatever is asked, once.
      if (event.kind === "permission-request") {
        queueMicrotask(() => gate.answer({ kind: "permission-response", request_id: event.request_id, decision: "allow-once" } as CommandOf<"permission-response">));
      }
    },
  });
  const provider = new FakeProvider([
    {
      toolCalls: [
        { id: "c1", name: "append_note", input: { path: "notes.md", line: "two" } },
        { id: "c2", name: "run_python", input: { code: "print(1)" } },
        { id: "c3", name: "count_words", input: { path: "notes.md" } },
      ],
    },
    { text: "Done." },
  ]);
  const outcome = await runTurn({
    sessionId: "s1", turnId: "t1", provider, tools: newTools(ctx), system: "sys", history: [],
    user: { role: "user", content: [{ type: "text", text: "go" }], headless: false },
    emit: async (e) => void events.push(e), requester: gate,
    retry: { maxRetries: 0, maxWaitMs: 1000, idleTimeoutMs: 5000, baseDelayMs: 1 },
    signal: new AbortController().signal, sleep: async () => {},
  });
  assert.equal(outcome.status, "success");
  assert.equal(readFileSync(join(t.ws, "notes.md"), "utf8"), "one\ntwo\n");

  // The gate: in accept-edits the edit and the read run unasked; the command outside the sandbox is asked about.
  const asked = events.filter((e): e is EventOf<"permission-request"> => e.kind === "permission-request");
  assert.deepEqual(asked.map((e) => [e.tool_name, e.tool_kind, e.mutates, e.title]), [["run_python", "exec", true, "print(1)"]]);
  const results = events.filter((e): e is EventOf<"tool-result"> => e.kind === "tool-result");
  assert.deepEqual(results.map((e) => [e.tool_name, e.is_error]), [["append_note", false], ["run_python", false], ["count_words", false]]);

  // tool-use carries each call's own view.
  const uses = events.filter((e): e is EventOf<"tool-use"> => e.kind === "tool-use");
  assert.deepEqual(uses.map((e) => [e.tool_kind, e.mutates, e.title, e.locations]), [
    ["edit", true, "Append to notes.md", [{ path: join(t.ws, "notes.md") }]],
    ["exec", true, "print(1)", []],
    ["read", false, "Count words in notes.md", [{ path: join(t.ws, "notes.md") }]],
  ]);

  // The TUI: each call's line is its title; a command's is led by its tool's name.
  const view = viewOf(events);
  const lines = plain(transcriptWindow(view, { theme: loadTheme("dark", {}), width: 60, now: Date.now(), thinkingExpanded: false }, new TranscriptCache(), FOLLOW, 30).lines);
  assert.deepEqual(lines.filter((l) => l.startsWith("✓")).map((l) => l.replace(/ ok \d+m?s$/, "")), [
    "✓ Append to notes.md", "✓ run_python print(1)", "✓ Count words in notes.md",
  ]);

  // ACP: kinds mapped onto ACP's, titles and locations from the events.
  assert.deepEqual(uses.map((e) => {
    const update = toolCallStarted(stamp(e) as EventOf<"tool-use">) as { kind: string; title: string; locations: unknown[] };
    return [update.kind, update.title, update.locations.length];
  }), [["edit", "Append to notes.md", 1], ["execute", "print(1)", 0], ["read", "Count words in notes.md", 1]]);
  assert.equal(permissionToolCall(stamp(asked[0]!) as EventOf<"permission-request">).kind, "execute");

  // Undo: the edit tool's change is the turn's to undo.
  const plan = planUndoStep(events.map((e) => stamp(e)));
  assert.deepEqual("steps" in plan && plan.steps, [{ path: join(t.ws, "notes.md"), before: "one\n", expected: "one\ntwo\n" }]);
});
