import { test } from "node:test";
import assert from "node:assert/strict";
import type { EventDraft } from "../../protocol/events.js";
import { draft as d } from "../fakes/fake-engine.js";
import { TuiHarness } from "./harness.js";
import { viewOfCall } from "./helpers.js";
import { createPatch } from "diff";

/*
 * Work shown inline (issue 24 items 6-8): tool times that agree live and after
 * resume, compact diffs, bash output under its line, and `!command`.
 */

/** Runs `body` on a started TUI and always closes it, so a failed assertion does not leave the test hanging. */
async function withTui(cols: number, rows: number, body: (h: TuiHarness) => Promise<void>): Promise<void> {
  const h = new TuiHarness(cols, rows).start();
  try {
    await h.waitFor("Type a prompt");
    await body(h);
  } finally {
    await quit(h);
  }
}

async function quit(h: TuiHarness): Promise<void> {
  await h.keys("\x03");
  await h.keys("\x04");
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the TUI did not exit:\n${h.text()}`)), 5000).unref());
  await Promise.race([h.result, timeout]);
}

/** A tool-use as the engine emits it: the built-in tool's own kind and title. */
const call = (id: string, name: string, input: Record<string, unknown>) => d.toolUse(id, name, input, viewOfCall(name, input));

const replayed = (e: EventDraft) => ({ ...e, replay: true }) as EventDraft;

test("a tool's time is the same live and after resume: the permission wait is not counted", { timeout: 60_000 }, async () => {
  const bash = { command: "npm test" };
  await withTui(100, 30, async (live) => {
    live.engine.emit(d.user("test it"));
    live.engine.emit(call("t1", "bash", bash));
    live.engine.emit(d.permission("r1", "t1", "bash", bash));
    await live.waitFor("Permission: bash");
    live.engine.advance(4200); // the user reads the request
    await live.keys("y");
    live.engine.emit(d.toolStart("t1", "bash"));
    live.engine.advance(1800);
    live.engine.emit({ ...d.toolResult("t1", "bash", "ok"), duration_ms: 1800 } as EventDraft);
    live.engine.emit(d.result());
    await live.waitFor(/✓ bash npm test +ok/);
    assert.match(live.text(), /✓ bash npm test +ok 1\.8s/);
  });
  // The same session resumed: stored events only (no tool-start), stamped as they were.
  await withTui(100, 30, async (resumed) => {
    resumed.engine.emit(replayed(d.user("test it")));
    resumed.engine.emit(replayed(call("t1", "bash", bash)));
    resumed.engine.advance(6000);
    resumed.engine.emit(replayed({ ...d.toolResult("t1", "bash", "ok"), duration_ms: 1800 } as EventDraft));
    await resumed.waitFor(/✓ bash npm test +ok/);
    assert.match(resumed.text(), /✓ bash npm test +ok 1\.8s/);
  });
});

test("80x24: an edit shows a compact numbered diff under its line and in the diff pane, without the Index/=== header", { timeout: 60_000 }, async () => {
  const before = Array.from({ length: 60 }, (_, i) => `const v${i + 1} = ${i + 1};`);
  const after = before.map((l, i) => (i === 39 ? "const v40 = 400;" : l));
  const diff = createPatch("src/a.ts", `${before.join("\n")}\n`, `${after.join("\n")}\n`);
  assert.match(diff, /^Index: src\/a\.ts\n=+\n--- /, "the tools' diffs carry the header this test expects gone");
  await withTui(80, 24, async (h) => {
    h.engine.emit(d.user("bump v40"));
    h.engine.emit(call("t1", "edit_file", { path: "src/a.ts" }));
    h.engine.emit(d.toolStart("t1", "edit_file"));
    h.engine.emit(d.toolResult("t1", "edit_file", "Edited src/a.ts", false, { path: "/work/proj/src/a.ts", diff }));
    h.engine.emit(d.result());
    await h.waitFor("src/a.ts 1/1");
    const screen = h.screen();
    const text = screen.join("\n");
    assert.doesNotMatch(text, /Index:|====|^\S*\s*(---|\+\+\+) /m);
    // In the transcript: the line numbers, the marks, the context.
    assert.ok(screen.some((row) => /│ +37 +const v37 = 37;/.test(row)), text);
    assert.ok(screen.some((row) => /│ +40 - const v40 = 40;/.test(row)), text);
    assert.ok(screen.some((row) => /│ +40 \+ const v40 = 400;/.test(row)), text);
    // In the diff pane (the right half of the strip): its header with the size of the change, then changed lines.
    const pane = screen.map((row) => row.slice(40));
    const header = pane.findIndex((row) => row.includes("src/a.ts 1/1"));
    assert.match(pane[header]!, /src\/a\.ts 1\/1 \+1 -1/);
    const body = pane.slice(header + 1, header + 5).join("\n");
    assert.match(body, /40 - const v40 = 40;/);
    assert.match(body, /40 \+ const v40 = 400;/);
  });
});

test("a bash call streams its newest lines under its line; done, they fold to a count; Ctrl-O or Enter on the transcript shows them", { timeout: 60_000 }, async () => {
  const lines = Array.from({ length: 8 }, (_, i) => `build step ${i + 1}`);
  await withTui(100, 30, async (h) => {
    h.engine.emit(d.user("build it"));
    h.engine.emit(call("t1", "bash", { command: "make" }));
    h.engine.emit(d.toolStart("t1", "bash"));
    h.engine.emit(d.toolUpdate("t1", "bash", `${lines.slice(0, 2).join("\n")}\n`));
    await h.waitFor("│ build step 2");
    h.engine.emit(d.toolUpdate("t1", "bash", `\x1b[32m${lines.join("\n")}\x1b[0m\n`));
    await h.waitFor("│ build step 8");
    let text = h.text();
    assert.match(text, /│ build step 4/);
    assert.doesNotMatch(text, /│ build step 3/, "only the newest lines");
    assert.doesNotMatch(text, /\[32m|␛/, "colour codes are dropped, not shown");
    h.engine.emit({ ...d.toolResult("t1", "bash", lines.join("\n")), duration_ms: 1200 } as EventDraft);
    h.engine.emit(d.result());
    await h.waitFor("8 lines of output (Ctrl-O shows)");
    assert.doesNotMatch(h.text(), /build step/, "folded when done");
    await h.keys("\x0f"); // Ctrl-O
    await h.waitFor("│ build step 1");
    text = h.text();
    assert.match(text, /│ build step 8/);
    await h.keys("\x0f");
    await h.waitFor(/^(?![\s\S]*build step 1)/);
    await h.keys("\t"); // the transcript takes the focus
    await h.keys("\r");
    await h.waitFor("│ build step 1");
  });
});

test("!command runs the user's command through the engine's shell command (never a prompt) and shows its output under it", { timeout: 60_000 }, async () => {
  await withTui(100, 30, async (h) => {
    await h.keys("!ls -la\r");
    assert.deepEqual(h.engine.commands("shell").map((c) => c.command), ["ls -la"]);
    assert.deepEqual(h.engine.commands("prompt"), [], "not sent to the model as a prompt");
    h.engine.emit({ kind: "shell-start", role: "user", shell_id: "s1", command: "ls -la" });
    h.engine.emit({ kind: "shell-update", role: "user", shell_id: "s1", tail: "README.md\nsrc\n", total_bytes: 14 });
    await h.waitFor("│ src");
    assert.match(h.text(), /! ls -la +running/);
    h.engine.emit({ kind: "shell", role: "user", shell_id: "s1", command: "ls -la", output: "README.md\nsrc", exit_code: 0, is_error: false, duration_ms: 40 });
    await h.waitFor("2 lines of output (Ctrl-O shows)");
    assert.match(h.text(), /✓ ! ls -la +ok 40ms/);
    // A bare "!" says what to do instead of sending anything.
    await h.keys("!\r");
    await h.waitFor("Type a command after !");
    assert.equal(h.engine.commands("shell").length, 1);
  });
});

test("a resumed session shows the user's earlier !command with its output folded", { timeout: 60_000 }, async () => {
  await withTui(100, 30, async (h) => {
    h.engine.emit(replayed({ kind: "shell", role: "user", shell_id: "s1", command: "git status", output: "clean", exit_code: 0, is_error: false, duration_ms: 900 }));
    await h.waitFor(/✓ ! git status +ok 900ms/);
    await h.keys("\x0f");
    await h.waitFor("│ clean");
  });
});

test("a call that never ran says so with its reason; a stopped or failed command counts its output, not Keen's note on it", { timeout: 60_000 }, async () => {
  await withTui(100, 30, async (h) => {
    h.engine.emit(d.user("go"));
    // Interrupted before it ran: the engine's refusal, marked interrupted.
    h.engine.emit(call("t1", "read_file", { path: "a.txt" }));
    h.engine.emit({ ...d.toolResult("t1", "read_file", "Not executed: the run was interrupted.", true), interrupted: true, not_run: true } as EventDraft);
    // Interrupted while it ran, having printed nothing: bash's result is "(no output)\n\n[aborted; …]".
    h.engine.emit(call("t2", "bash", { command: "sleep 10" }));
    h.engine.emit(d.toolStart("t2", "bash"));
    const aborted = "aborted; the command and its child processes were killed";
    h.engine.emit({ ...d.toolResult("t2", "bash", `(no output)\n\n[${aborted}]`, true, { output_lines: 0, note: aborted }), interrupted: true } as EventDraft);
    // Interrupted having printed two lines.
    h.engine.emit(call("t3", "bash", { command: "make" }));
    h.engine.emit(d.toolStart("t3", "bash"));
    h.engine.emit({ ...d.toolResult("t3", "bash", `step 1\nstep 2\n\n\n[${aborted}]`, true, { output_lines: 2, note: aborted }), interrupted: true } as EventDraft);
    // Failed with one line of output: the error shown is its exit code, and the one line is counted.
    h.engine.emit(call("t4", "bash", { command: "false" }));
    h.engine.emit(d.toolStart("t4", "bash"));
    h.engine.emit(d.toolResult("t4", "bash", "nope\n\n\n[exit code 1]", true, { output_lines: 1, note: "exit code 1" }));
    // Succeeded silently.
    h.engine.emit(call("t5", "bash", { command: "true" }));
    h.engine.emit(d.toolStart("t5", "bash"));
    h.engine.emit(d.toolResult("t5", "bash", "(no output)", false, { output_lines: 0 }));
    h.engine.emit(d.result());
    await h.waitFor("bash true");
    const rows = h.screen().map((r) => r.replace(/│┌.*|││.*/, "").replace(/[│ ]+$/, "")); // the transcript pane alone
    const under = (head: RegExp) => rows[rows.findIndex((r) => head.test(r)) + 1] ?? "";
    assert.match(under(/- Read a\.txt +interrupted/), /⎿ Not executed: the run was interrupted\.$/);
    assert.match(under(/- bash sleep 10 +interrupted/), /⎿ no output, aborted$/);
    assert.match(under(/- bash make +interrupted/), /⎿ 2 lines of output, aborted \(Ctrl-O shows\)$/);
    assert.match(under(/✗ bash false +failed/), /^│ +exit code 1$/);
    assert.match(rows[rows.findIndex((r) => /✗ bash false +failed/.test(r)) + 2]!, /⎿ 1 line of output \(Ctrl-O shows\)$/);
    assert.match(under(/✓ bash true +ok/), /⎿ no output$/);
    assert.doesNotMatch(h.text(), /3 lines of output|4 lines of output/);
    // Expanded (Ctrl-O), a command shows its whole result; a read that never ran still says so.
    await h.keys("\x0f");
    await h.waitFor("│ step 2");
    const open = h.screen().map((r) => r.replace(/│┌.*|││.*/, "").replace(/[│ ]+$/, ""));
    assert.match(open[open.findIndex((r) => /- Read a\.txt +interrupted/.test(r)) + 1]!, /⎿ Not executed: the run was interrupted\.$/);
  });
});
