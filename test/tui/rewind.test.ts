import { test } from "node:test";
import assert from "node:assert/strict";
import { draft as d, FakeEngine } from "../fakes/fake-engine.js";
import { TuiController } from "../../app/tui/controller.js";
import { handleInput } from "../../app/tui/input-actions.js";
import { ESC_TWICE_MS } from "../../app/tui/rewind-actions.js";
import { loadTheme } from "../../themes/index.js";
import { applyRewind } from "../../app/tui/rewind-state.js";
import { diffPaneLines } from "../../app/tui/views/diff-pane.js";
import { createRewindPicker, filesFrom, rewindModes, rewindPickerLines } from "../../app/tui/views/rewind-picker.js";
import { inlineLines } from "../../app/tui/views/tool-inline.js";
import { reduce } from "../../app/tui/state.js";
import { plain, stamp, viewOf } from "./helpers.js";

const theme = loadTheme("dark", {});
const NOW = 1_700_000_600_000;
const diffOf = (path: string, from: string, to: string) => `--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-${from}\n+${to}\n`;
const edit = (id: string, path: string, from: string, to: string) => [
  d.toolUse(id, "edit_file", { path }, { tool_kind: "edit", title: `Edit ${path}` }),
  d.toolResult(id, "edit_file", `Edited ${path}`, false, { path: `/work/proj/${path}`, diff: diffOf(path, from, to) }),
];

/** Three turns: the first edits a.ts, the second edits a.ts and b.ts, the third only answers. */
const threeTurns = () =>
  viewOf([
    d.sessionStart(),
    d.user("one"), ...edit("t1", "a.ts", "a0", "a1"), d.text("did one"), d.result(),
    d.user("two"), ...edit("t2", "a.ts", "a1", "a2"), ...edit("t3", "b.ts", "b0", "b1"), d.text("did two"), d.result(),
    d.user("three"), d.text("did three"), d.result(),
  ]);

const texts = (view: ReturnType<typeof viewOf>) => view.items.flatMap((it) => (it.type === "user" || it.type === "assistant" ? [it.text] : []));

test("a conversation rewind drops the turns from that prompt on, with their tool calls; the files' diffs stay current", () => {
  const view = threeTurns();
  const notice = applyRewind(view, { to: 2, text: "two", conversation: true, files: [] });
  assert.deepEqual(texts(view), ["one", "did one"]);
  assert.deepEqual(view.toolOrder, ["t1"]);
  assert.equal(view.tools.has("t2"), false);
  assert.equal(view.lastPrompt, "one");
  assert.equal(view.lastAnswer, "did one");
  assert.equal(view.diffs.length, 3, "a conversation rewind leaves the files (and their diffs) as they are");
  assert.ok(view.diffs.every((x) => !x.reverted));
  assert.equal(notice, 'Rewound to before prompt 2 ("two"); 2 turns left the conversation; files unchanged.');
});

test("a files rewind marks the changes of that turn and later ones reverted, not earlier ones; the transcript stays", () => {
  const view = threeTurns();
  const notice = applyRewind(view, {
    to: 2, text: "two", conversation: false,
    files: [{ path: "/work/proj/a.ts", action: "restored" }, { path: "/work/proj/b.ts", action: "deleted" }],
  });
  assert.deepEqual(view.diffs.map((x) => [x.callId, x.reverted === true]), [["t1", false], ["t2", true], ["t3", true]]);
  assert.equal(view.tools.get("t2")?.reverted, true);
  assert.equal(view.tools.get("t1")?.reverted, undefined);
  assert.deepEqual(texts(view), ["one", "did one", "two", "did two", "three", "did three"]);
  assert.equal(notice, 'Files put back as they were before prompt 2 ("two"); restored a.ts; deleted b.ts.');
});

test("rewinds in a row: the prompt numbers are the conversation's as it stands, and a later files rewind reaches changes of turns rewound before", () => {
  const view = threeTurns();
  applyRewind(view, { to: 2, text: "two", conversation: true, files: [] });
  reduce(view, { ...d.user("two again"), conversation_id: "c", ts: 1 } as never);
  assert.deepEqual(texts(view), ["one", "did one", "two again"]);
  applyRewind(view, { to: 1, text: "one", conversation: true, files: [{ path: "/work/proj/a.ts", action: "restored" }, { path: "/work/proj/b.ts", action: "deleted" }] });
  assert.deepEqual(texts(view), []);
  assert.deepEqual(view.toolOrder, []);
  assert.deepEqual(view.diffs.map((x) => x.reverted === true), [true, true, true]);
});

test("undos in a row (rewind events without the conversation) mark one more turn's changes each; a replayed rewind drops the same turns", () => {
  const view = threeTurns();
  const undo = (to: number, paths: string[]) => reduce(view, stamp({ kind: "rewind", to, text: "", conversation: false, files: paths.map((path) => ({ path, action: "restored" as const })) }));
  undo(2, ["/work/proj/a.ts", "/work/proj/b.ts"]);
  assert.deepEqual(view.diffs.map((x) => [x.callId, x.reverted === true]), [["t1", false], ["t2", true], ["t3", true]]);
  undo(1, ["/work/proj/a.ts"]);
  assert.deepEqual(view.diffs.map((x) => x.reverted === true), [true, true, true]);
  assert.deepEqual(texts(view), ["one", "did one", "two", "did two", "three", "did three"]);

  const replayed = threeTurns();
  reduce(replayed, stamp({ kind: "rewind", to: 3, text: "three", conversation: true, files: [] }, { replay: true } as never));
  assert.deepEqual(texts(replayed), ["one", "did one", "two", "did two"]);
  assert.match((replayed.items.at(-1) as { text: string }).text, /^Rewound to before prompt 3 \("three"\); 1 turn left the conversation/);
  // A replay that already left the rewound turns out: the rewind reaches past the transcript and changes nothing.
  reduce(replayed, stamp({ kind: "rewind", to: 5, text: "gone", conversation: true, files: [{ path: "/work/proj/a.ts", action: "restored" }] }));
  assert.deepEqual(texts(replayed), ["one", "did one", "two", "did two"]);
  assert.ok(replayed.diffs.every((x) => !x.reverted));
});

test("the diff pane draws a reverted change dim, without diff colours, tagged reverted; the call's inline diff says so too", () => {
  const view = threeTurns();
  applyRewind(view, { to: 2, text: "two", conversation: false, files: [{ path: "b.ts", action: "deleted" }] });
  const current = diffPaneLines(view.diffs, 1, 60, theme);
  const reverted = diffPaneLines(view.diffs, 2, 60, theme);
  assert.match(plain([current.header])[0]!, /^\/work\/proj\/a\.ts 2\/3 \+1 -1$/);
  assert.match(plain([reverted.header])[0]!, /^\/work\/proj\/b\.ts 3\/3 \+1 -1 reverted$/);
  // Every body line is one dim span: no diff colour survives.
  const dimOpen = reverted.body[0]!.slice(0, reverted.body[0]!.indexOf("m") + 1);
  for (const line of reverted.body) {
    assert.equal(line.startsWith(dimOpen), true, line);
    assert.equal((line.match(/\x1b\[[0-9;]*m/g) ?? []).length, 2, JSON.stringify(line));
  }
  assert.deepEqual(plain(reverted.body), ["1 - b0", "1 + b1"]);
  assert.notDeepEqual(current.body, plain(current.body), "the current change keeps its colours");
  const inline = plain(inlineLines(view.tools.get("t3")!, 60, theme, false));
  assert.equal(inline[0], "    (reverted: the file was put back)");
});

test("the rewind picker: newest prompt first with its time and files; files offered only when that turn or a later one changed files", () => {
  const points = [
    { index: 1, text: "one", ts: NOW - 3_600_000, files: ["/work/proj/a.ts"] },
    { index: 2, text: "two\nsecond line", ts: NOW - 120_000, files: ["/work/proj/a.ts", "/work/proj/b.ts"] },
    { index: 3, text: "three", ts: NOW - 5_000, files: [] },
  ];
  const picker = createRewindPicker(points);
  assert.deepEqual(picker.points.map((p) => p.index), [3, 2, 1]);
  assert.deepEqual(rewindModes(points, 3), ["conversation"]);
  assert.deepEqual(rewindModes(points, 2), ["conversation", "files", "both"]);
  assert.deepEqual(filesFrom(points, 1), ["/work/proj/a.ts", "/work/proj/b.ts"]);
  const { lines } = rewindPickerLines(picker, 60, 10, theme, NOW, "/work/proj");
  assert.deepEqual(plain(lines), [
    "3  three                                              5s ago",
    "2  two second line                          2m ago · 2 files",
    "1  one                                       1h ago · 1 file",
    "",
    "Enter chooses · Esc cancels",
  ]);
  picker.selected = 1;
  picker.step = { modes: rewindModes(points, 2), selected: 2 };
  const second = plain(rewindPickerLines(picker, 60, 12, theme, NOW, "/work/proj").lines);
  assert.equal(second[0], "Before prompt 2: two second line");
  assert.equal(second[1], "Changed by it and later turns: a.ts, b.ts");
  assert.match(second[4]!, /^files +the files go back/);
  assert.match(second[5]!, /^both +conversation and files/);
  assert.equal(second.at(-1), "Enter rewinds · Esc back to the prompts");
});

test("Esc Esc: a second Esc within ESC_TWICE_MS on an empty idle prompt opens the picker; later, after a key, or with text typed, it only arms", async () => {
  const engine = new FakeEngine();
  let clock = 1_000_000;
  const c = new TuiController({
    client: engine, theme, initial: { cwd: "/work/proj", model: "m/x", permissionMode: "ask" },
    requestFrame: () => {}, redraw: () => {}, exit: () => {}, now: () => clock,
  });
  engine.subscribe((event) => c.onEvent(event));
  engine.answers["list-checkpoints"] = { ok: true, data: { session_id: "s", checkpoints: [{ index: 1, text: "one", ts: clock, files: [] }] } };
  const esc = () => handleInput(c, { type: "key", name: "escape", ctrl: false, meta: false, shift: false }, undefined);
  const answered = () => new Promise<void>((resolve) => setImmediate(resolve));
  // Read through a call: an assertion on it must not narrow its type for the lines after.
  const overlay = () => c.ui.overlay?.kind;
  engine.emit(d.sessionStart());

  esc();
  assert.equal(c.ui.note?.text, "Esc again: rewind to an earlier prompt");
  clock += ESC_TWICE_MS + 1;
  esc(); // too late: arms again
  handleInput(c, { type: "text", text: "x" }, undefined);
  handleInput(c, { type: "key", name: "backspace", ctrl: false, meta: false, shift: false }, undefined);
  esc(); // a key came between: arms again
  handleInput(c, { type: "text", text: "typed" }, undefined);
  esc();
  esc(); // text in the input: nothing
  await answered();
  assert.equal(engine.commands("list-checkpoints").length, 0);
  assert.equal(overlay(), undefined);

  c.editor.setText("");
  esc();
  clock += ESC_TWICE_MS - 1;
  esc();
  await answered();
  assert.equal(engine.commands("list-checkpoints").length, 1);
  assert.equal(overlay(), "rewind");
  esc(); // Esc closes the picker
  assert.equal(overlay(), undefined);

  c.view.running = true;
  esc();
  esc(); // a running turn: Esc interrupts, never opens the picker
  await answered();
  assert.equal(engine.commands("interrupt").length, 2);
  assert.equal(engine.commands("list-checkpoints").length, 1);
});
