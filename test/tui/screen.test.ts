import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../temp.js";
import { draft as d } from "../fakes/fake-engine.js";
import { TuiHarness } from "./harness.js";
import { viewOfCall } from "./helpers.js";

const DIFF = "--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,3 @@\n const x = 1;\n-const y = 2;\n+const y = 3;\n const z = 4;\n";

async function started(cols: number, rows: number, options = {}): Promise<TuiHarness> {
  const h = new TuiHarness(cols, rows).start(options);
  await h.waitFor("Type a prompt");
  return h;
}

async function quit(h: TuiHarness): Promise<string | undefined> {
  await h.keys("\x03"); // Ctrl-C clears the prompt (idle)
  await h.keys("\x04"); // Ctrl-D on an empty prompt exits
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the TUI did not exit:\n${h.text()}`)), 20_000).unref());
  return Promise.race([h.result, timeout]);
}

test("120x40: a streamed answer, a tool call in the tool panel, its diff in the diff pane, the status bar", async () => {
  // The clock stays at the test's start: on a loaded machine the frame with the delta can come more
  // than 10 s after it, and the status bar would rightly say "no data for 10s" instead of "streaming".
  const start = Date.now();
  const h = await started(120, 40, { now: () => start });
  h.engine.emit(d.sessionStart());
  await h.keys("fix the bug\r");
  assert.deepEqual(h.engine.commands("prompt").map((c) => c.text), ["fix the bug"]);
  h.engine.emit(d.user("fix the bug"));
  h.engine.emit(d.delta("Looking at **src/a.ts** now"));
  await h.waitFor("Looking at src/a.ts now");
  assert.match(h.text(), / streaming +anthropic\/claude-test \| mode: ask/);
  h.engine.emit(d.contentEnd());
  h.engine.emit(d.text("Looking at **src/a.ts** now"));
  h.engine.emit(d.toolUse("t1", "edit_file", { path: "src/a.ts" }, viewOfCall("edit_file", { path: "src/a.ts" })));
  h.engine.emit(d.toolStart("t1", "edit_file"));
  await h.waitFor("running edit_file");
  h.engine.emit(d.toolResult("t1", "edit_file", "Edited src/a.ts", false, { path: "/work/proj/src/a.ts", diff: DIFF }));
  h.engine.emit(d.result());
  await h.waitFor("/work/proj/src/a.ts 1/1");
  const screen = h.text();
  assert.match(screen, /Tools 1/);
  assert.match(screen, /✓ Edit src\/a\.ts +ok \d+ms/);
  assert.match(screen, /2 \+ const y = 3;/);
  assert.match(screen, / idle +anthropic\/claude-test \| mode: ask \| ctx 1\.3k\/200k 1% \| 1\.2k in 80 out \| 0199aaaa \| \/work\/proj/);
  assert.equal(screen.split("\n").length, 40);
  assert.equal(await quit(h), "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee");
});

test("80x24: an edit approved from the modal with its diff; a bash command denied with a message", async () => {
  const h = await started(80, 24);
  h.engine.emit(d.user("go"));
  const edit = viewOfCall("edit_file", { path: "src/a.ts" });
  h.engine.emit(d.toolUse("t1", "edit_file", { path: "src/a.ts" }, edit));
  h.engine.emit(d.permission("r1", "t1", "edit_file", { path: "src/a.ts" }, DIFF, "src/a.ts", edit));
  await h.waitFor("Permission: edit_file");
  assert.match(h.text(), /Edit src\/a\.ts\?/);
  assert.match(h.text(), /2 - const y = 2;/);
  assert.match(h.text(), / waiting for you /);
  await h.keys("y");
  assert.deepEqual(h.engine.commands("permission-response").map(({ request_id, decision }) => ({ request_id, decision })), [{ request_id: "r1", decision: "allow-once" }]);
  await h.waitFor(/^(?![\s\S]*Permission: edit_file)/);
  const bash = viewOfCall("bash", { command: "rm -rf build" });
  h.engine.emit(d.toolUse("t2", "bash", { command: "rm -rf build" }, bash));
  h.engine.emit(d.permission("r2", "t2", "bash", { command: "rm -rf build" }, undefined, undefined, bash));
  await h.waitFor("Permission: bash");
  assert.match(h.text(), /Look twice: deletes recursively\./);
  await h.keys("m");
  await h.keys("use make clean\r");
  const last = h.engine.commands("permission-response").at(-1)!;
  assert.deepEqual({ decision: last.decision, message: last.message }, { decision: "deny", message: "use make clean" });
  await quit(h);
});

test("40x10: panes collapse to the transcript and the input; resizing mid-turn and back keeps working", async () => {
  const h = await started(40, 10);
  assert.ok(!h.text().includes("Tools"));
  h.engine.emit(d.user("q"));
  h.engine.emit(d.delta("中文字符 and a long line that wraps around the narrow screen"));
  await h.waitFor("中文字符 and a long line that wraps");
  assert.ok(h.screen().every((row) => row.length <= 40));
  await h.resize(120, 40);
  await h.waitFor("Tools");
  await h.resize(30, 8);
  await h.resize(40, 10);
  h.engine.emit(d.delta(" — still streaming"));
  await h.waitFor(/still\s+streaming/);
  assert.ok(!h.text().includes("Tools"));
  await quit(h);
});

test("bracketed paste: inserted whole and never sent by its newlines; a long paste collapses and is sent in full", async () => {
  const h = await started(80, 24);
  await h.keys("\x1b[200~line one\r\nline two\r\nline three\x1b[201~");
  assert.equal(h.engine.commands("prompt").length, 0);
  assert.match(h.text(), /> line one.*\n.*line two.*\n.*line three/);
  await h.keys("\x03");
  const long = Array.from({ length: 412 }, (_, i) => `trace line ${i}`).join("\n");
  await h.keys(`explain: \x1b[200~${long}\x1b[201~`);
  await h.waitFor("explain: [pasted 412 lines]");
  await h.keys("\r");
  assert.deepEqual(h.engine.commands("prompt").map((c) => c.text), [`explain: ${long}`]);
  await quit(h);
});

test("keys: Alt-Enter and Ctrl-J add lines; Esc interrupts and puts the queued prompt back in the input; Ctrl-C twice exits and the terminal is restored", async () => {
  const h = await started(80, 24);
  await h.keys("a\x1b\rb\nc");
  assert.match(h.text(), /> a.*\n.* {2}b.*\n.* {2}c/);
  await h.keys("\r");
  assert.deepEqual(h.engine.commands("prompt").map((c) => c.text), ["a\nb\nc"]);
  h.engine.emit(d.user("a\nb\nc"));
  h.engine.emit(d.delta("working"));
  await h.keys("next one\r");
  await h.waitFor("1. queued: next one");
  assert.match(h.text(), /1 queued/);
  const interrupt = h.engine.nextCommand("interrupt");
  await h.keys("\x1b");
  await interrupt;
  assert.equal(h.engine.commands("interrupt").length, 1);
  h.engine.emit(d.result({ status: "interrupted" }));
  await h.waitFor("the queued prompts are back in the input");
  assert.doesNotMatch(h.text(), /interrupting…/, "the interrupt landed: its status-bar note goes with the turn");
  assert.match(h.text(), /> next one/);
  assert.doesNotMatch(h.text(), /queued: next one/);
  assert.deepEqual(h.engine.commands("prompt").map((c) => c.text), ["a\nb\nc"], "nothing sent unasked");
  await h.keys("\x03"); // clears the input
  await h.keys("\x03");
  await h.waitFor("Press Ctrl-C again to exit");
  assert.equal(h.stdin.rawMode, true);
  await h.keys("\x03");
  assert.equal(await h.result, "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee");
  const out = h.written.join("");
  assert.ok(out.includes("\x1b[?2004h") && out.includes("\x1b[?2004l"), "bracketed paste on, then off");
  assert.ok(out.includes("\x1b[?1000l") && out.includes("\x1b[?1006l"), "mouse reporting off");
  assert.ok(out.lastIndexOf("\x1b[?1049l") > out.lastIndexOf("\x1b[?1049h"), "alternate screen left");
  assert.ok(out.includes("\x1b[?2026h") && out.includes("\x1b[?2026l"), "frames in synchronized output");
  assert.equal(h.stdin.rawMode, false);
  assert.match(out, /Resume it with: keen --resume 0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee\n$/);
  assert.equal(h.engine.commands("shutdown").length, 1);
});

test("/model and /sessions pickers send set-model and resume-session with replay; the history is redrawn", async () => {
  const h = await started(100, 30);
  h.engine.answers["list-models"] = { ok: true, data: [
    { model: "anthropic/claude-test", provider: "anthropic", current: true, available: true },
    { model: "openai/gpt-x", provider: "openai", current: false, available: true },
  ] };
  await h.keys("/model\r");
  await h.waitFor("openai/gpt-x");
  const setModel = h.engine.nextCommand("set-model");
  await h.keys("\x1b[B\r");
  await setModel;
  assert.deepEqual(h.engine.commands("set-model").map((c) => c.model), ["openai/gpt-x"]);
  await h.waitFor(" idle  openai/gpt-x");
  // Two ids made within a minute share their first 8 characters: each row shows the prefix that tells them apart.
  h.engine.answers["list-sessions"] = { ok: true, data: [
    { id: "0199bbbb-0000-7aaa", title: "older work", updated: Date.now() - 3_600_000, model: "x", status: "success" },
    { id: "0199bbbb-0001-7bbb", title: "a fork", updated: Date.now() - 7_200_000, model: "x", status: "success", parent: { id: "0199bbbb-0000-7aaa", at: 1 } },
  ] };
  h.engine.answers["resume-session"] = { ok: true, data: { session_id: "0199bbbb-0000-7aaa", cwd: "/work/proj", model: "openai/gpt-x", title: "older work" } };
  h.engine.onCommand = (cmd, engine) => {
    if (cmd.kind !== "resume-session") return;
    engine.emit({ ...d.user("what was it?"), replay: true } as never);
    engine.emit({ ...d.text("It was **this**."), replay: true } as never);
  };
  await h.keys("/sessions\r");
  await h.waitFor("older work");
  await h.waitFor("a fork");
  assert.match(h.text(), /0199bbbb-0000 +older work/);
  assert.match(h.text(), /0199bbbb-0001 +a fork/);
  assert.match(h.text(), /fork of 0199bbbb-0000\b/);
  await h.keys("\r");
  await h.waitFor("It was this.");
  assert.deepEqual(h.engine.commands("list-sessions").map((c) => c.cwd), ["/work/proj"]);
  assert.deepEqual(h.engine.commands("resume-session").map(({ session, replay }) => ({ session, replay })), [{ session: "0199bbbb-0000-7aaa", replay: true }]);
  const compact = h.engine.nextCommand("compact");
  await h.keys("/compact keep the API notes\r");
  await compact;
  assert.deepEqual(h.engine.commands("compact").map((c) => c.instructions), ["keep the API notes"]);
  h.engine.answers["undo"] = { ok: true, data: { files: [{ path: "/work/proj/a.txt", action: "restore" }, { path: "/work/proj/b.txt", action: "remove" }] } };
  await h.keys("/undo\r");
  await h.waitFor("Type /undo again");
  await h.keys("/undo\r");
  await h.waitFor("Undone: restore /work/proj/a.txt, remove /work/proj/b.txt.");
  assert.deepEqual(h.engine.commands("undo").map((c) => c.confirm), [undefined, true]);
  await quit(h);
});

test("first run without a provider: the TUI opens and says what to set", async () => {
  const h = new TuiHarness(120, 30);
  h.engine.answers["list-models"] = { ok: true, data: [{ model: "anthropic/claude-sonnet-5-5", provider: "anthropic", current: true, available: false }] };
  h.start();
  await h.waitFor("ANTHROPIC_API_KEY");
  assert.match(h.text(), /No model provider is configured/);
  assert.match(h.text(), /OPENAI_API_KEY/);
  await quit(h);
});

test("step limit: the TUI asks whether to continue and sends continue", async () => {
  const h = await started(80, 24);
  h.engine.emit(d.user("big job"));
  h.engine.emit(d.result({ status: "max_turns" }));
  await h.waitFor("The turn stopped at the step limit.");
  await h.keys("y");
  assert.deepEqual(h.engine.commands("prompt").map((c) => c.text), ["continue"]);
  await quit(h);
});

test("Shift-Tab cycles the permission mode; /copy writes a bare OSC 52; a retry counts down", async () => {
  const h = await started(100, 24);
  await h.keys("\x1b[Z");
  await h.waitFor("mode: accept-edits");
  assert.deepEqual(h.engine.commands("set-permission-mode").map((c) => c.mode), ["accept-edits"]);
  h.engine.emit(d.user("q"));
  h.engine.emit(d.text("the answer"));
  h.engine.emit(d.result());
  await h.keys("/copy\r");
  assert.ok(h.written.join("").includes(`\x1b]52;c;${Buffer.from("the answer").toString("base64")}\x07`));
  h.engine.emit(d.user("again"));
  h.engine.emit(d.retry(2, 9000));
  await h.waitFor(/retry 1\/4 in \d+s/);
  await quit(h);
});

test("history per workspace: Up recalls earlier prompts and new ones are appended; @ completes the paths the engine lists", async () => {
  const dir = makeTempDir("keen-tui-");
  const historyFile = join(dir, "history.jsonl");
  writeFileSync(historyFile, `${JSON.stringify("an older prompt")}\n`);
  const h = await started(100, 30, { historyFile, initial: { cwd: "/work/proj", model: "m/x", permissionMode: "ask" } });
  // The engine's list-files (answered with its filesystem guard; test/e2e/stdio-list-files.test.ts): the TUI shows what it gets.
  h.engine.answers["list-files"] = (command) => ({
    ok: true, data: { paths: command.kind === "list-files" && command.query === "ap" ? ["src/app.ts", "src/apple.ts"] : [], truncated: false },
  });
  await h.keys("\x1b[A");
  await h.waitFor("> an older prompt");
  await h.keys("\x03look at @ap");
  await h.waitFor("src/apple.ts");
  const asked = h.engine.commands("list-files").at(-1)!;
  assert.deepEqual([asked.query, asked.limit], ["ap", 50]);
  await h.keys("\t");
  await h.waitFor("> look at @src/app.ts");
  await h.keys("\r");
  assert.deepEqual(h.engine.commands("prompt").map((c) => c.text), ["look at @src/app.ts "]);
  h.engine.emit(d.result());
  assert.deepEqual(readFileSync(historyFile, "utf8").trim().split("\n").map((l) => JSON.parse(l)), ["an older prompt", "look at @src/app.ts "]);
  await h.keys("@.e");
  // The completion list is drawn in the same frame as the input line.
  await h.waitFor("> @.e");
  assert.deepEqual(h.engine.commands("list-files").at(-1)!.query, ".e");
  assert.ok(!h.text().includes("src/apple.ts"), "no list for a query the engine matched nothing to");
  await quit(h);
});

test("Ctrl-G edits the prompt in $EDITOR and comes back to the same screen", async () => {
  const h = new TuiHarness(80, 24);
  h.start({ env: { TERM: "xterm-256color", EDITOR: "sed -i s/draft/edited/" } });
  await h.waitFor("Type a prompt");
  await h.keys("a draft prompt");
  await h.keys("\x07");
  await h.waitFor("> a edited prompt");
  assert.equal(h.stdin.rawMode, true, "raw mode is back after the editor");
  await quit(h);
});

test("leaving during a turn interrupts it before the engine shuts down; a tool input that is not JSON still draws", async () => {
  const h = await started(80, 24);
  await h.keys("go\r");
  h.engine.emit(d.user("go"));
  h.engine.emit(d.delta("partial"));
  h.engine.emit({ kind: "tool-use", role: "assistant", tool_name: "bash", tool_call_id: "t1", input: "not json {" });
  await h.waitFor("partial");
  await h.keys("\x04");
  await h.result;
  assert.deepEqual(h.engine.sent.map((c) => c.kind).slice(-2), ["interrupt", "shutdown"]);
});

test("PgUp and the mouse wheel scroll the transcript; new output leaves a scrolled view in place; End follows again; Tab moves the focus", async () => {
  const h = await started(80, 24);
  for (let i = 0; i < 60; i++) {
    h.engine.emit({ ...d.user(`question ${i}`), replay: true } as never);
    h.engine.emit({ ...d.text(`answer ${i}`), replay: true } as never);
  }
  await h.waitFor("answer 59");
  await h.keys("\x1b[5~");
  await h.waitFor("scrolled: End follows");
  assert.ok(!h.text().includes("answer 59"));
  const before = h.text();
  h.engine.emit(d.user("live question"));
  h.engine.emit(d.delta("live answer"));
  // The status bar is drawn in the same frame as the transcript that took the new output.
  await h.waitFor(" streaming ");
  assert.equal(h.text().split("\n").slice(1, 8).join("\n"), before.split("\n").slice(1, 8).join("\n"), "the scrolled view did not move");
  await h.keys("\x1b[<65;10;5M".repeat(20));
  await h.waitFor("live answer");
  await h.keys("\t");
  await h.keys("\x1b[5~");
  await h.waitFor("scrolled: End follows");
  await h.keys("\x1b[F");
  await h.waitFor(/Keen ─/);
  assert.ok(h.text().includes("live answer"));
  h.engine.emit(d.result());
  await quit(h);
});

test("prompts typed while an answer streams wait under the input, enter the transcript when their turn starts, and nothing is drawn twice", async () => {
  const h = await started(80, 24);
  h.engine.emit(d.sessionStart());
  await h.keys("first question\r");
  h.engine.emit(d.user("first question"));
  h.engine.emit(d.delta("Alpha one. "));
  await h.waitFor("Alpha one.");
  await h.keys("second question\r");
  await h.keys("third question\r");
  await h.waitFor("2. queued: third question");
  assert.match(h.text(), /2 queued/);
  assert.deepEqual(h.engine.commands("prompt").map((c) => c.text), ["first question"], "queued prompts wait in the TUI");
  h.engine.emit(d.delta("Alpha two."));
  h.engine.emit(d.contentEnd());
  h.engine.emit(d.text("Alpha one. Alpha two."));
  const second = h.engine.nextCommand("prompt");
  h.engine.emit(d.result());
  assert.equal((await second).text, "second question");
  h.engine.emit(d.user("second question"));
  h.engine.emit(d.delta("Beta."));
  h.engine.emit(d.contentEnd());
  h.engine.emit(d.text("Beta."));
  const third = h.engine.nextCommand("prompt");
  h.engine.emit(d.result());
  assert.equal((await third).text, "third question");
  h.engine.emit(d.user("third question"));
  h.engine.emit(d.text("Gamma."));
  h.engine.emit(d.result());
  await h.waitFor("Gamma.");
  const screen = h.text();
  const order = ["> first question", "Alpha one. Alpha two.", "> second question", "Beta.", "> third question", "Gamma."].map((s) => screen.indexOf(s));
  assert.ok(order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]!)), `in order, each once:\n${screen}`);
  assert.equal(screen.split("Alpha one.").length, 2, "the first answer is drawn once");
  assert.doesNotMatch(screen, /queued/);
  await quit(h);
});

test("Up on an empty input takes the last queued prompt back to edit; clearing it removes it from the queue", async () => {
  const h = await started(80, 24);
  await h.keys("go\r");
  h.engine.emit(d.user("go"));
  h.engine.emit(d.delta("working"));
  await h.keys("keep me\r");
  await h.keys("drop me\r");
  await h.waitFor("2. queued: drop me");
  await h.keys("\x1b[A");
  await h.waitFor("> drop me");
  assert.match(h.text(), /1 queued/);
  assert.doesNotMatch(h.text(), /queued: drop me/);
  await h.keys("\x03"); // Ctrl-C while running interrupts; clear with Ctrl-U instead
  h.engine.emit(d.result({ status: "interrupted" }));
  await h.waitFor("the queued prompts are back in the input");
  assert.match(h.text(), /> keep me/);
  await quit(h);
});
