import { test } from "node:test";
import assert from "node:assert/strict";
import type { EventDraft, KeenEvent } from "../../protocol/events.js";
import { listCheckpoints, planRewind, planUndoStep } from "../../app/agent/checkpoints.js";
import { projectConversation, rewoundEvents } from "../../storage/projection.js";

/* Checkpoints and rewind planning: pure functions over a session's stored events. */

const stamp = (events: EventDraft[]) => events.map((e, i) => ({ ...e, conversation_id: "c", ts: i }) as KeenEvent);
const prompt = (turn: string, text = turn): EventDraft => ({ kind: "user-message", turn_id: turn, message: { role: "user", content: [{ type: "text", text }] } });
const answer = (turn: string, text: string): EventDraft[] => [
  { kind: "assistant-message", turn_id: turn, message: { role: "assistant", content: [{ type: "text", text }] } },
  { kind: "turn-end", turn_id: turn, status: "success", steps: 1 },
];
const use = (id: string, name: string, kind?: "edit" | "read" | "exec"): EventDraft => ({
  kind: "tool-use", role: "assistant", tool_name: name, tool_call_id: id, input: "{}", ...(kind ? { tool_kind: kind } : {}),
});
const result = (id: string, name: string, details: Record<string, unknown>): EventDraft => ({
  kind: "tool-result", role: "assistant", tool_name: name, tool_call_id: id, result: "ok", is_error: false, details,
});
const edit = (id: string, path: string, before: string | null, after: string): EventDraft[] => [
  use(id, "write_file", "edit"), result(id, "write_file", { path, old_text: before, new_text: after }),
];
const rewind = (to: number, conversation: boolean, files: string[] = []): EventDraft => ({
  kind: "rewind", to, text: "", conversation, files: files.map((path) => ({ path, action: "restored" as const })),
});
const userTexts = (events: KeenEvent[]) =>
  projectConversation(events).filter((m) => m.role === "user").map((m) => (m.content[0] as { text: string }).text);

/** Three turns: 1 creates a.txt, 2 edits it and b.txt, 3 edits a.txt again. */
const threeTurns: EventDraft[] = [
  prompt("t1", "one"), ...edit("w1", "/w/a.txt", null, "a1"), ...answer("t1", "did one"),
  prompt("t2", "two"), ...edit("w2", "/w/a.txt", "a1", "a2"), ...edit("w3", "/w/b.txt", "b0", "b1"), ...answer("t2", "did two"),
  prompt("t3", "three"), ...edit("w4", "/w/a.txt", "a2", "a3"), ...answer("t3", "did three"),
];

test("every prompt is a checkpoint, listing the files it or later turns changed", () => {
  assert.deepEqual(listCheckpoints(stamp(threeTurns)).map((c) => [c.index, c.text, c.files]), [
    [1, "one", ["/w/a.txt", "/w/b.txt"]], [2, "two", ["/w/a.txt", "/w/b.txt"]], [3, "three", ["/w/a.txt"]],
  ]);
});

test("a files rewind restores each file to its text before the prompt and checks the text Keen left last", () => {
  const plan = planRewind(stamp(threeTurns), 2, { files: true, conversation: true });
  assert.ok("steps" in plan);
  assert.equal(plan.checkpoint.text, "two");
  assert.deepEqual(plan.steps, [{ path: "/w/a.txt", before: "a1", expected: "a3" }, { path: "/w/b.txt", before: "b0", expected: "b1" }]);
  const all = planRewind(stamp(threeTurns), 1, { files: true, conversation: false });
  assert.deepEqual("steps" in all && all.steps, [{ path: "/w/a.txt", before: null, expected: "a3" }, { path: "/w/b.txt", before: "b0", expected: "b1" }]);
  assert.deepEqual(planRewind(stamp(threeTurns), 4, { files: false, conversation: true }), { code: "unknown_checkpoint", error: "no prompt 4: the session has 3" });
  assert.equal((planRewind(stamp([]), 1, { files: false, conversation: true }) as { code: string }).code, "nothing_to_rewind");
});

test("rewinds stack: to 3, then to 2; the history, the checkpoints and a new prompt follow the rewound state", () => {
  const log = stamp([...threeTurns, rewind(3, true, ["/w/a.txt"])]);
  assert.deepEqual(userTexts(log), ["one", "two"]);
  assert.deepEqual(listCheckpoints(log).map((c) => [c.index, c.files]), [[1, ["/w/a.txt", "/w/b.txt"]], [2, ["/w/a.txt", "/w/b.txt"]]]);
  // Turn 3's change was put back: a second files rewind expects turn 2's text in a.txt.
  const second = planRewind(log, 2, { files: true, conversation: true });
  assert.deepEqual("steps" in second && second.steps, [{ path: "/w/a.txt", before: "a1", expected: "a2" }, { path: "/w/b.txt", before: "b0", expected: "b1" }]);
  const twice = stamp([...threeTurns, rewind(3, true, ["/w/a.txt"]), rewind(2, true, ["/w/a.txt", "/w/b.txt"]), prompt("t4", "two again"), ...answer("t4", "again")]);
  assert.deepEqual(userTexts(twice), ["one", "two again"]);
  assert.deepEqual(listCheckpoints(twice).map((c) => [c.index, c.text, c.files]), [[1, "one", ["/w/a.txt"]], [2, "two again", []]]);
  // The log keeps everything; only the current history drops the rewound turns (permission answers stay).
  const rule: EventDraft = { kind: "permission-rule", tool_name: "bash", decision: "allow" };
  const kept = rewoundEvents(stamp([prompt("t1"), ...answer("t1", "a"), prompt("t2"), rule, ...answer("t2", "b"), rewind(2, true)]));
  assert.deepEqual(kept.map((e) => e.kind), ["user-message", "assistant-message", "turn-end", "permission-rule", "rewind"]);
});

test("a conversation-only rewind keeps the files: their changes still count for a later files rewind", () => {
  const log = stamp([...threeTurns, rewind(2, true), prompt("t5", "other"), ...edit("w5", "/w/c.txt", null, "c1"), ...answer("t5", "x")]);
  assert.deepEqual(listCheckpoints(log).map((c) => [c.index, c.text]), [[1, "one"], [2, "other"]]);
  const plan = planRewind(log, 1, { files: true, conversation: true });
  assert.deepEqual("steps" in plan && plan.steps.map((s) => [s.path, s.before, s.expected]), [
    ["/w/a.txt", null, "a3"], ["/w/b.txt", "b0", "b1"], ["/w/c.txt", null, "c1"],
  ]);
});

test("undo walks back turn by turn: each undo is a files-only rewind, and the next one goes one turn further", () => {
  const first = planUndoStep(stamp(threeTurns));
  assert.ok("steps" in first);
  assert.deepEqual([first.checkpoint.index, first.steps], [3, [{ path: "/w/a.txt", before: "a2", expected: "a3" }]]);
  const afterOne = stamp([...threeTurns, rewind(3, false, ["/w/a.txt"])]);
  const second = planUndoStep(afterOne);
  assert.deepEqual("steps" in second && [second.checkpoint.index, second.steps], [2, [{ path: "/w/a.txt", before: "a1", expected: "a2" }, { path: "/w/b.txt", before: "b0", expected: "b1" }]]);
  assert.deepEqual(userTexts(afterOne), ["one", "two", "three"], "undo keeps the conversation");
  const allUndone = stamp([...threeTurns, rewind(3, false, ["/w/a.txt"]), rewind(2, false, ["/w/a.txt", "/w/b.txt"]), rewind(1, false, ["/w/a.txt"])]);
  assert.deepEqual(planUndoStep(allUndone), { error: "nothing to undo: no file change of Keen's is still in place" });
  // A turn that changed nothing is skipped: undo reverts the latest turn whose changes are in place.
  const quiet = planUndoStep(stamp([...threeTurns, prompt("t6", "look"), ...answer("t6", "ok")]));
  assert.equal("checkpoint" in quiet && quiet.checkpoint.index, 3);
});

test("undo goes by the call's declared kind: an edit's texts are restored, another kind's details never count", () => {
  const plan = planUndoStep(stamp([
    prompt("t"),
    use("a", "patch", "edit"), result("a", "patch", { path: "/w/a.ts", old_text: "1", new_text: "2" }),
    use("b", "runner", "exec"), result("b", "runner", { path: "/w/b.ts", old_text: "x", new_text: "y" }),
    use("c", "peek", "read"), result("c", "peek", { path: "/w/c.ts" }),
  ]));
  assert.deepEqual("steps" in plan && plan.steps, [{ path: "/w/a.ts", before: "1", expected: "2" }]);
  assert.deepEqual(planUndoStep(stamp([prompt("t"), use("a", "patch", "edit"), result("a", "patch", { path: "/w/big.bin" })])), {
    error: "/w/big.bin: the change was too large for Keen to keep its previous contents; restore it with git", refused: true,
  });
});

test("a turn stored before tools declared kinds: a result carrying a file's texts is still undone, a read's path is not a change", () => {
  const plan = planUndoStep(stamp([
    prompt("t"),
    use("a", "old_writer"), result("a", "old_writer", { path: "/w/new.ts", old_text: null, new_text: "hi" }),
    use("b", "old_reader"), result("b", "old_reader", { path: "/w/r.ts", total_lines: 3 }),
  ]));
  assert.deepEqual("steps" in plan && plan.steps, [{ path: "/w/new.ts", before: null, expected: "hi" }]);
});

test("a rewind past a compaction: the history is the raw turns before the prompt, and a resume reads the whole log for it", async () => {
  const { loadSession } = await import("../../app/agent/engine-session.js");
  const replacement: EventDraft = {
    kind: "context-replacement", trigger: "manual",
    messages: [{ role: "user", content: [{ type: "text", text: "SUMMARY of one and two" }] }, { role: "assistant", content: [{ type: "text", text: "ok" }] }],
  };
  const events = stamp([
    prompt("t1", "one"), ...answer("t1", "a1"), prompt("t2", "two"), ...answer("t2", "a2"),
    replacement, prompt("t3", "three"), ...answer("t3", "a3"), rewind(2, true),
  ]);
  assert.deepEqual(userTexts(events), ["one"], "the summary covered the rewound turn: it goes too");
  assert.deepEqual(userTexts(events.slice(0, -1)), ["SUMMARY of one and two", "three"]);
  const offset = events.findIndex((e) => e.kind === "context-replacement");
  const store = {
    loadRecent: async () => ({ events: events.slice(offset), offset, rules: [] }),
    load: async () => events,
  } as unknown as Parameters<typeof loadSession>[0];
  const meta = { id: "c", title: "", cwd: "/w", model: "m", created: 0, updated: 0, status: "success" as const };
  const loaded = await loadSession(store, { id: "c", meta, cwd: "/w", started: false, seen: 0 });
  assert.deepEqual(loaded.history.filter((m) => m.role === "user").map((m) => (m.content[0] as { text: string }).text), ["one"]);
});

test("runRewind: a changed file refuses all and stores nothing; a restore failing midway stores only what was put back", async () => {
  const { runRewind } = await import("../../app/agent/rewind.js");
  const disk = new Map<string, string | null>([["/w/a.txt", "a3"], ["/w/b.txt", "b1"]]);
  const emitted: EventDraft[] = [];
  const files = (broken?: string) => ({
    checkFile: (path: string, expected: string) => (disk.get(path) === expected ? undefined : `${path} changed since`),
    restoreFile: (path: string, content: string | null) => (path === broken ? `${path}: denied` : void disk.set(path, content)),
  });
  const command = { kind: "rewind" as const, to: 2, files: true };
  disk.set("/w/b.txt", "mine");
  const refused = await runRewind("c", stamp(threeTurns), command, files(), async (e) => void emitted.push(e));
  assert.deepEqual(refused, { ok: false, code: "file_changed", error: "nothing was changed: /w/b.txt changed since", data: { paths: ["/w/b.txt"] } });
  assert.deepEqual([emitted, disk.get("/w/a.txt")], [[], "a3"]);
  disk.set("/w/b.txt", "b1");
  const partial = await runRewind("c", stamp(threeTurns), command, files("/w/b.txt"), async (e) => void emitted.push(e));
  assert.deepEqual([partial.ok, disk.get("/w/a.txt"), disk.get("/w/b.txt")], [false, "a1", "b1"]);
  assert.deepEqual(emitted, [{ kind: "rewind", to: 2, text: "two", conversation: false, files: [{ path: "/w/a.txt", action: "restored" }] }]);
});
