import { test } from "node:test";
import assert from "node:assert/strict";
import { draft as d } from "../fakes/fake-engine.js";
import { TuiHarness } from "./harness.js";

const SESSION = "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee";
const FORK = "0199ffff-0000-7000-8000-000000000001";
const diffOf = (path: string, from: string, to: string) => `--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-${from}\n+${to}\n`;
// Times relative to the moment the picker asks (not to the module's import, which in a shard of
// many files can be minutes earlier): "2m ago" is any age from 90 to 149 s.
const checkpoints = (now = Date.now()) => [
  { index: 1, text: "first prompt", ts: now - 3_600_000, files: [] },
  { index: 2, text: "second prompt", ts: now - 120_000, files: ["/work/proj/a.ts"] },
  { index: 3, text: "third prompt", ts: now - 5_000, files: [] },
];

async function quit(h: TuiHarness): Promise<void> {
  await h.keys("\x03");
  await h.keys("\x03");
  await h.keys("\x04");
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the TUI did not exit:\n${h.text()}`)), 20_000).unref());
  await Promise.race([h.result, timeout]);
}

/** A TUI on a session of three turns; the second edited a.ts. */
async function threeTurns(): Promise<TuiHarness> {
  const h = new TuiHarness(120, 36).start();
  await h.waitFor("Type a prompt");
  h.engine.emit(d.sessionStart());
  h.engine.emit(d.user("first prompt"));
  h.engine.emit(d.text("answer one"));
  h.engine.emit(d.result());
  h.engine.emit(d.user("second prompt"));
  h.engine.emit(d.toolUse("t1", "edit_file", { path: "a.ts" }, { tool_kind: "edit", title: "Edit a.ts" }));
  h.engine.emit(d.toolResult("t1", "edit_file", "Edited a.ts", false, { path: "/work/proj/a.ts", diff: diffOf("a.ts", "old line", "new line") }));
  h.engine.emit(d.text("answer two"));
  h.engine.emit(d.result());
  h.engine.emit(d.user("third prompt"));
  h.engine.emit(d.text("answer three"));
  h.engine.emit(d.result());
  await h.waitFor("answer three");
  h.engine.answers["list-checkpoints"] = { ok: true, data: { session_id: SESSION, checkpoints: checkpoints() } };
  return h;
}

/** The transcript pane's text as one line: its rows without the borders, joined by spaces. */
function transcript(h: TuiHarness): string {
  return h.screen().map((r) => r.split("││")[0]!.replace(/^│/, "").trim()).join(" ").replace(/\s+/g, " ");
}

/** The input box's text rows, between its borders. */
function inputBox(h: TuiHarness): string {
  const rows = h.screen();
  const last = (from: number, corner: string) => {
    for (let i = from; i >= 0; i--) if (rows[i]!.startsWith(corner)) return i;
    return -1;
  };
  const end = last(rows.length - 1, "└");
  return rows.slice(last(end - 1, "┌") + 1, end).join("\n");
}

test("Esc Esc on an empty prompt: the picker lists earlier prompts newest first; both rewinds the conversation and the files and puts the prompt back", async () => {
  const h = await threeTurns();
  h.engine.answers["rewind"] = { ok: true, data: { session_id: SESSION, to: 2, text: "second prompt", files: [{ path: "/work/proj/a.ts", action: "restored" }] } };
  h.engine.onCommand = (command, engine) => {
    if (command.kind === "rewind") engine.emit({ kind: "rewind", to: 2, text: "second prompt", conversation: true, files: [{ path: "/work/proj/a.ts", action: "restored" }] });
  };
  // Esc, Esc and a focus report (which changes nothing on screen) in one write: the decoder releases both Escs
  // at once, so the second is always within the double-press time however loaded the machine (rewind.test.ts
  // covers the time itself with a fake clock).
  await h.press("\x1b\x1b\x1b[I");
  await h.waitFor("Rewind: go back to before a prompt");
  const rows = h.screen().filter((r) => /│\s*\d  \w+ prompt/.test(r));
  assert.deepEqual(rows.map((r) => /(\d)  (\w+ prompt)/.exec(r)!.slice(1).join(" ")), ["3 third prompt", "2 second prompt", "1 first prompt"]);
  assert.match(h.text(), /2  second prompt +2m ago · 1 file/);
  await h.keys("\x1b[B"); // Down: the second prompt
  await h.keys("\r");
  await h.waitFor("Rewind: what to take back");
  assert.match(h.text(), /Before prompt 2: second prompt/);
  assert.match(h.text(), /Changed by it and later turns: a\.ts/);
  assert.match(h.text(), /conversation +the model forgets this prompt/);
  await h.keys("\x1b[B");
  await h.keys("\x1b[B");
  await h.keys("\r");
  await h.waitFor("Rewound to before prompt 2");
  assert.deepEqual(h.engine.commands("rewind").map(({ to, files, conversation }) => ({ to, files, conversation })), [{ to: 2, files: true, conversation: true }]);
  await h.waitFor("> second prompt");
  const screen = h.text();
  assert.match(inputBox(h), /> second prompt/);
  assert.doesNotMatch(screen, /answer two|answer three|third prompt/, "the rewound turns left the transcript");
  assert.match(screen, /answer one/);
  assert.match(screen, /restored a\.ts/);
  assert.match(screen, /\/work\/proj\/a\.ts 1\/1 \+1 -1 reverted/, "the diff pane marks the change reverted");
  assert.match(screen, /No tool calls yet\./, "the rewound turn's call left the tool panel");
  await quit(h);
});

test("the picker: files is not offered for a turn that changed none; Esc goes back a step, then closes; Esc with text typed opens nothing", async () => {
  const h = await threeTurns();
  await h.keys("/rewind\r");
  await h.waitFor("Rewind: go back to before a prompt");
  await h.keys("\r"); // the newest prompt: it changed no file
  await h.waitFor("No file was changed by it or later turns.");
  assert.doesNotMatch(h.text(), /files +the files go back|both +conversation and files/);
  await h.press("\x1b");
  await h.waitFor("Rewind: go back to before a prompt");
  await h.press("\x1b");
  await h.waitFor(/^(?![\s\S]*Rewind: go back)/);
  assert.equal(h.engine.commands("rewind").length, 0);
  await h.keys("typed");
  // Esc, Esc, then Home and a letter: one write, so the second Esc is not held back waiting for more bytes.
  await h.keys("\x1b\x1b\x1b[HX");
  assert.equal(h.engine.commands("list-checkpoints").length, 1, "Esc Esc on a prompt being typed opens nothing");
  assert.match(inputBox(h), /> Xtyped/);
  assert.doesNotMatch(h.text(), /Rewind: go back/);
  await quit(h);
});

test("a rewind refused because a file changed outside Keen says so, naming the files; nothing changes on screen", async () => {
  const h = await threeTurns();
  h.engine.answers["rewind"] = { ok: false, error: "changed since", error_code: "file_changed", data: { paths: ["/work/proj/a.ts", "/work/proj/lib/b.ts"] } };
  await h.keys("/rewind\r");
  await h.waitFor("Rewind: go back to before a prompt");
  await h.keys("\x1b[B\r");
  await h.waitFor("Rewind: what to take back");
  await h.keys("b"); // both, by its letter
  await h.waitFor("Rewind refused, nothing was changed: a.ts, lib/b.ts changed");
  assert.match(h.text(), /outside Keen since\. Rewind the conversation only/);
  assert.deepEqual(h.engine.commands("rewind").map(({ files, conversation }) => ({ files, conversation })), [{ files: true, conversation: true }]);
  assert.match(h.text(), /answer three/);
  assert.doesNotMatch(h.text(), /reverted/);
  assert.doesNotMatch(inputBox(h), /second prompt/);
  await quit(h);
});

test("/undo twice, twice: each confirmed undo marks one more turn's change reverted in the diff pane", async () => {
  const h = await threeTurns();
  h.engine.emit(d.user("fourth prompt"));
  h.engine.emit(d.toolUse("t2", "edit_file", { path: "a.ts" }, { tool_kind: "edit", title: "Edit a.ts" }));
  h.engine.emit(d.toolResult("t2", "edit_file", "Edited a.ts", false, { path: "/work/proj/a.ts", diff: diffOf("a.ts", "new line", "newer line") }));
  h.engine.emit(d.result());
  await h.waitFor("/work/proj/a.ts 2/2 +1 -1");
  h.engine.answers["undo"] = { ok: true, data: { files: [{ path: "/work/proj/a.ts", action: "restore" }], restored: true } };
  // The engine stores each confirmed undo as a files-only rewind to the turn it took back: prompt 4, then prompt 2.
  const undone = [4, 2];
  h.engine.onCommand = (command, engine) => {
    if (command.kind !== "undo" || !command.confirm) return;
    engine.emit({ kind: "rewind", to: undone.shift()!, text: "", conversation: false, files: [{ path: "/work/proj/a.ts", action: "restored" }] });
  };
  await h.keys("/undo\r");
  await h.waitFor("Type /undo again");
  await h.keys("/undo\r");
  await h.waitFor("/work/proj/a.ts 2/2 +1 -1 reverted");
  assert.match(h.text(), /Undone: restore \/work\/proj\/a\.ts\. \/undo again takes back the turn before\./);
  await h.keys("\t\t\t"); // focus: transcript, tools, diff
  await h.keys("p"); // the previous change: still current
  await h.waitFor(/\/work\/proj\/a\.ts 1\/2 \+1 -1 *│/);
  await h.keys("/undo\r");
  await h.keys("/undo\r");
  await h.waitFor("/work/proj/a.ts 1/2 +1 -1 reverted");
  assert.deepEqual(h.engine.commands("undo").map((c) => c.confirm), [undefined, true, undefined, true]);
  await quit(h);
});

test("/fork 2: the engine forks at prompt 2; the transcript and the status bar say which session this is and what it forked", async () => {
  const h = await threeTurns();
  h.engine.answers["fork-session"] = { ok: true, data: { session_id: FORK, parent: SESSION, at: 2, text: "second prompt" } };
  h.engine.onCommand = (command, engine) => {
    if (command.kind !== "fork-session") return;
    engine.emit({ ...d.user("first prompt"), replay: true } as never);
  };
  await h.keys("/fork x\r");
  await h.waitFor('/fork takes a prompt number (1 is the first prompt), not "x"');
  assert.equal(h.engine.commands("fork-session").length, 0);
  await h.keys("/fork 2\r");
  await h.waitFor(`Forked: you are in session ${FORK} now,`);
  assert.ok(transcript(h).includes(`Forked: you are in session ${FORK} now, a fork of ${SESSION} before prompt 2; the original is unchanged`), transcript(h));
  assert.deepEqual(h.engine.commands("fork-session").map(({ at, replay }) => ({ at, replay })), [{ at: 2, replay: true }]);
  assert.match(h.text(), /0199ffff-0000 \(fork of 0199aaaa-bbbb\)/);
  assert.match(inputBox(h), /> second prompt/);
  assert.doesNotMatch(h.text(), /answer three/);
  await quit(h);
});

test("slash completion offers /rewind and /fork", async () => {
  const h = new TuiHarness(100, 30).start();
  await h.waitFor("Type a prompt");
  await h.keys("/re");
  await h.waitFor("/rewind");
  assert.match(h.text(), /\/rewind +go back to before an earlier prompt/);
  await h.keys("\x03/fo");
  await h.waitFor(/\/fork \[N\] +continue in a new session/);
  await quit(h);
});
