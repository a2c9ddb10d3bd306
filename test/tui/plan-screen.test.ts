import { test } from "node:test";
import assert from "node:assert/strict";
import type { EventDraft } from "../../protocol/events.js";
import { draft as d } from "../fakes/fake-engine.js";
import { TuiHarness } from "./harness.js";
import { viewOfCall } from "./helpers.js";

const first = [
  { content: "Read the parser", status: "completed" },
  { content: "Fix the off-by-one", status: "in_progress" },
  { content: "Run the tests", status: "pending" },
] as const;
const second = first.map((e) => ({ ...e, status: "completed" as const }));

function planCall(id: string, entries: readonly { content: string; status: string }[]): EventDraft[] {
  const input = { todos: entries };
  return [
    d.toolUse(id, "todo_write", input, viewOfCall("todo_write", input)), d.toolStart(id, "todo_write"),
    d.toolResult(id, "todo_write", "Plan updated."),
    { kind: "plan-update", role: "assistant", tool_call_id: id, entries: entries as never },
  ];
}

/** The transcript's rows from the first line matching `from`, `count` rows, trailing spaces trimmed. */
function rows(h: TuiHarness, from: RegExp, count: number, nth = 0): string[] {
  // Inside the transcript's frame: its borders are not the plan's.
  const lines = h.text().split("\n").map((l) => l.replace(/^│/, "").trimEnd().replace(/│$/, "").trimEnd());
  const starts = lines.flatMap((l, i) => (from.test(l) ? [i] : []));
  assert.ok(starts.length > nth, `no ${from} (${nth}) on screen:\n${h.text()}`);
  return lines.slice(starts[nth], starts[nth]! + count);
}

test("each plan-update shows the plan as a checklist in the transcript, live and when a resumed session replays it", async () => {
  const h = new TuiHarness(80, 40).start();
  await h.waitFor("Type a prompt");
  h.engine.emit(d.user("fix the parser"));
  for (const e of planCall("c1", first)) h.engine.emit(e);
  await h.waitFor("Plan · 1/3 done");
  assert.deepEqual(rows(h, /Plan · 1\/3 done/, 4), [
    "Plan · 1/3 done", "  [x] Read the parser", "  [~] Fix the off-by-one", "  [ ] Run the tests",
  ]);
  // The call's own line says what it was, once.
  assert.match(h.text(), /✓ Plan \(3 items\)/);

  // A second update adds the new plan below; the earlier one stays as history.
  for (const e of planCall("c2", second)) h.engine.emit(e);
  h.engine.emit(d.text("All fixed."));
  h.engine.emit(d.result());
  await h.waitFor("All fixed.");
  assert.deepEqual(rows(h, /Plan · 3\/3 done/, 4), ["Plan · 3/3 done", "  [x] Read the parser", "  [x] Fix the off-by-one", "  [x] Run the tests"]);
  assert.match(h.text(), /Plan · 1\/3 done/);

  // On resume the stored events come back as replay: the same checklist is drawn.
  h.engine.answers["list-sessions"] = { ok: true, data: [{ id: "0199bbbb-0000", title: "older work", updated: Date.now() - 3_600_000, model: "x", status: "success" }] };
  h.engine.answers["resume-session"] = { ok: true, data: { session_id: "0199bbbb-0000", cwd: "/work/proj", model: "anthropic/claude-test", title: "older work" } };
  h.engine.onCommand = (cmd, engine) => {
    if (cmd.kind !== "resume-session") return;
    for (const e of [d.user("plan the release"), ...planCall("r1", [{ content: "Tag the release", status: "pending" }])]) engine.emit({ ...e, replay: true } as never);
  };
  await h.keys("/sessions\r");
  await h.waitFor("older work");
  await h.keys("\r");
  await h.waitFor("Plan · 0/1 done");
  assert.deepEqual(rows(h, /Plan · 0\/1 done/, 2), ["Plan · 0/1 done", "  [ ] Tag the release"]);
  await h.keys("\x03");
  await h.keys("\x04");
  await h.result;
});
