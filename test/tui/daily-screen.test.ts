import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { draft as d } from "../fakes/fake-engine.js";
import { makeTempDir } from "../temp.js";
import { TuiHarness } from "./harness.js";

/* Ctrl-Z, the mouse released to the terminal, terminal notifications and /export, on a whole screen. */

async function quit(h: TuiHarness): Promise<void> {
  await h.keys("\x03");
  await h.keys("\x04");
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the TUI did not exit:\n${h.text()}`)), 5000).unref());
  await Promise.race([h.result, timeout]);
}

/** What Keen wrote to the terminal since `mark` (an index into `written`). */
const since = (h: TuiHarness, mark: number) => h.written.slice(mark).join("");

test("Ctrl-Z gives the terminal back (normal screen, no raw mode, no mouse) and SIGCONT repaints the whole screen", async () => {
  const h = new TuiHarness(100, 30);
  type Stopped = { buffer: string; raw: boolean; mouse: string; focus: boolean };
  let onStop: ((s: Stopped) => void) | undefined;
  const nextStop = () =>
    Promise.race([
      new Promise<Stopped>((r) => (onStop = r)),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`Ctrl-Z did not stop Keen:\n${h.text()}`)), 5000).unref()),
    ]);
  h.start({
    // What the shell finds when Keen stops: its own screen and a cooked terminal.
    stopProcess: () => void h.settle(0).then(() => onStop?.({ buffer: h.term.buffer.active.type, raw: h.stdin.rawMode, mouse: h.term.modes.mouseTrackingMode, focus: h.term.modes.sendFocusMode })),
  });
  await h.waitFor("Type a prompt");
  h.engine.emit(d.user("hello"));
  h.engine.emit(d.text("the answer before the pause"));
  h.engine.emit(d.result());
  await h.waitFor("the answer before the pause");
  await h.keys("half typed");
  let stopped = nextStop();
  await h.press("\x1a");
  assert.deepEqual(await stopped, { buffer: "normal", raw: false, mouse: "none", focus: false });
  // The shell prints on the normal screen meanwhile.
  h.term.write("$ ls\r\nfile.txt\r\n$ fg\r\n");
  const mark = h.written.length;
  process.emit("SIGCONT");
  await h.waitFor("the answer before the pause");
  assert.equal(h.term.buffer.active.type, "alternate");
  assert.equal(h.stdin.rawMode, true);
  assert.equal(h.term.modes.mouseTrackingMode, "vt200");
  const screen = h.text();
  assert.match(screen, /Tools/);
  assert.match(screen, /> half typed/);
  assert.doesNotMatch(screen, /file\.txt/);
  assert.match(since(h, mark), /\x1b\[\?1049h/);
  await h.keys("\x7f".repeat(10));

  // From the permission modal too: it is there again, still waiting, after fg.
  h.engine.emit(d.permission("r1", "c1", "bash", { command: "ls" }));
  await h.waitFor("Permission: bash");
  stopped = nextStop();
  await h.press("\x1a");
  assert.equal((await stopped).buffer, "normal");
  process.emit("SIGCONT");
  await h.waitFor("Permission: bash");
  assert.equal(h.engine.commands("permission-response").length, 0);
  await h.keys("n");
  await quit(h);
});

test("Alt-M releases the mouse to the terminal and takes it back; config tui.mouse false starts released", async () => {
  const h = new TuiHarness(100, 30).start();
  await h.waitFor("Type a prompt");
  assert.equal(h.term.modes.mouseTrackingMode, "vt200");
  await h.keys("\x1bm");
  await h.waitFor("mouse released");
  assert.equal(h.term.modes.mouseTrackingMode, "none");
  await h.keys("\x1bm");
  await h.waitFor("mouse: Keen");
  assert.equal(h.term.modes.mouseTrackingMode, "vt200");
  await quit(h);

  const off = new TuiHarness(100, 30).start({ settings: { mouse: false } });
  await off.waitFor("Type a prompt");
  assert.equal(off.term.modes.mouseTrackingMode, "none");
  assert.equal(off.term.modes.bracketedPasteMode, true);
  await quit(off);
});

test("notifications: only while the terminal reports it is not focused (default), OSC 9 on request", async () => {
  const h = new TuiHarness(100, 30).start({ settings: { notifyWith: "osc9" } });
  await h.waitFor("Type a prompt");
  assert.equal(h.term.modes.sendFocusMode, true);
  let mark = h.written.length;
  h.engine.emit(d.result());
  await h.settle();
  assert.doesNotMatch(since(h, mark), /\x1b\]9;/, "focused (or never reported): no notification");

  await h.press("\x1b[O"); // the terminal lost the focus
  mark = h.written.length;
  h.engine.emit(d.permission("r1", "c1", "bash", { command: "ls" }));
  await h.waitFor("Permission: bash");
  assert.match(since(h, mark), /\x1b\]9;Keen: waiting for your answer: bash\x07/);
  await h.keys("y");
  mark = h.written.length;
  h.engine.emit(d.result({ status: "interrupted" }));
  await h.settle();
  assert.match(since(h, mark), /\x1b\]9;Keen: turn ended: interrupted\x07/);

  await h.press("\x1b[I"); // focused again
  mark = h.written.length;
  h.engine.emit(d.result());
  await h.settle();
  assert.doesNotMatch(since(h, mark), /\x1b\]9;/);
  await quit(h);
  assert.equal(h.term.modes.sendFocusMode, false, "focus reports off again at exit");
});

test("notifications: always, as OSC 777 wrapped for tmux passthrough when $TMUX is set; the bell by default; never", async () => {
  const tmux = new TuiHarness(100, 30).start({ env: { TERM: "xterm-256color", TMUX: "/tmp/tmux-1/default,1,0" }, settings: { notify: "always", notifyWith: "osc777" } });
  await tmux.waitFor("Type a prompt");
  let mark = tmux.written.length;
  tmux.engine.emit(d.result());
  await tmux.settle();
  assert.ok(since(tmux, mark).includes("\x1bPtmux;\x1b\x1b]777;notify;Keen;turn finished\x07\x1b\\"), JSON.stringify(since(tmux, mark)));
  await quit(tmux);

  const bell = new TuiHarness(100, 30).start({ env: { TERM: "xterm-256color", TMUX: "/tmp/tmux-1/default,1,0" }, settings: { notify: "always" } });
  await bell.waitFor("Type a prompt");
  mark = bell.written.length;
  bell.engine.emit(d.result());
  await bell.settle();
  assert.ok(bell.written.slice(mark).includes("\x07"), "a bare bell, never wrapped: tmux shows it itself");
  await quit(bell);

  const never = new TuiHarness(100, 30).start({ settings: { notify: "never" } });
  await never.waitFor("Type a prompt");
  await never.press("\x1b[O");
  mark = never.written.length;
  never.engine.emit(d.result());
  await never.settle();
  assert.ok(!never.written.slice(mark).includes("\x07"));
  await quit(never);
});

test("/export writes the session's transcript to keen-<id>.md in its directory and asks before overwriting, with paths wider than the pane", async () => {
  // Wider than the transcript pane whatever TMPDIR is: the notices wrap inside the path as well as at spaces
  // (the e2e runner's per-run TMPDIR once moved "exists" to the next row and a one-row match failed).
  const dir = join(makeTempDir("keen-tui-export-"), "a-session-directory-with-a-name-much-longer-than-the-pane-is-wide");
  mkdirSync(dir);
  const asked: string[] = [];
  let text = "# hello\n\n> hello\nthe answer\n";
  const h = new TuiHarness(100, 30).start({
    initial: { cwd: dir, model: "anthropic/claude-test", permissionMode: "ask" },
    transcriptMarkdown: async (id) => (asked.push(id), text),
  });
  await h.waitFor("Type a prompt");
  await h.keys("/export\r");
  await h.waitFor("nothing to export yet");
  h.engine.emit(d.sessionStart({ cwd: dir }));
  h.engine.emit(d.user("hello"));
  h.engine.emit(d.result());
  const id = h.engine.conversationId;
  const file = join(dir, `keen-${id}.md`);
  await h.keys("/export\r");
  await h.waitForIn("Keen", `Exported the transcript (4 lines) to ${file}.`);
  assert.equal(readFileSync(file, "utf8"), text);
  assert.deepEqual(asked, [id]);

  text = "# hello\n\nnewer\n";
  await h.keys("/export\r");
  await h.waitForIn("Keen", `${file} exists: /export again, right now, overwrites it.`);
  assert.match(readFileSync(file, "utf8"), /the answer/, "not overwritten by the first /export");
  await h.keys("/help\r\x1b"); // another command in between: the confirmation lapses
  await h.keys("/export\r");
  assert.match(readFileSync(file, "utf8"), /the answer/);
  await h.keys("/export\r");
  await h.waitForIn("Keen", `Exported the transcript (3 lines) to ${file}.`);
  assert.equal(readFileSync(file, "utf8"), text);

  // A named file, relative to the session's directory.
  writeFileSync(join(dir, "notes.md"), "mine");
  await h.keys("/export sub/none.md\r");
  await h.waitForIn("Keen", `Error: /export: ENOENT: ${join(dir, "sub/none.md")}`);
  await h.keys("/export notes.md\r");
  await h.waitForIn("Keen", `${join(dir, "notes.md")} exists: /export notes.md again, right now, overwrites it.`);
  assert.equal(readFileSync(join(dir, "notes.md"), "utf8"), "mine");
  assert.ok(!existsSync(join(dir, "sub")));
  // /help asked the engine for the custom commands on the way: no drawing failed (the fake engine once
  // answered list-commands without its list, and the TUI said "display error").
  assert.doesNotMatch(h.paneText("Keen") ?? "", /displayerror/);
  await quit(h);
});
