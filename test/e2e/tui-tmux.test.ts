import { after, before, beforeEach, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startMockLLMServer, type MockLLMServer } from "../fakes/mock-llm-server.js";
import { textWidth } from "../../app/tui/text.js";
import { makeSandbox } from "./harness.js";
import { TMUX_MISSING, TmuxKeen } from "./tmux.js";

/*
 * The TUI in a real terminal (tmux) against the mock LLM server: bin/keen,
 * the bundle, blessed and the engine together. Without tmux every test here
 * is reported as skipped with the reason.
 */

const MODEL = "anthropic/claude-test";
const skip = TMUX_MISSING ?? false;
let server: MockLLMServer;
const open: TmuxKeen[] = [];
before(async () => {
  if (!TMUX_MISSING) server = await startMockLLMServer();
});
after(async () => {
  for (const t of open) t.kill();
  await server?.close();
});
beforeEach(() => server?.reset());

function keen(args: string[] = [], size?: { cols: number; rows: number }) {
  const sb = makeSandbox(server.url);
  const t = new TmuxKeen(["--model", MODEL, ...args], sb.env, sb.workspace, size);
  open.push(t);
  return { sb, t };
}

// Sequential steps of one user's session in one TUI (a Keen TUI in tmux costs ~2 s of CPU): a first
// prompt, @ completion, an edit approved, a bash command denied, /exit. Each step is a subtest, so a
// failure names it.
test("one session in the default ask mode: a streamed answer and a tool, @ completion, an approved edit, a denied bash command, /exit", { skip }, async (st) => {
  const { sb, t } = keen();
  writeFileSync(join(sb.workspace, "README.md"), "# Demo\n");
  for (const [path, text] of [["notes-app.md", "n\n"], [".env", "TOKEN=1\n"], ["app.key", "k\n"], [".gitignore", "app.log\n"], ["app.log", "l\n"]]) {
    writeFileSync(join(sb.workspace, path!), text!);
  }
  await t.waitFor("Type a prompt");
  // The provider's connection opens once the first frame is up (app/cli/tui.ts), before any prompt.
  for (const deadline = Date.now() + 10_000; server.connections() === 0 && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
  assert.equal(server.connections(), 1, "the TUI connected early");
  assert.equal(server.requests.length, 0);

  await st.test("a prompt and its streamed answer, a tool call in the tool panel", async () => {
    // The server's counts start again at each subtest (beforeEach).
    const before = server.connections();
    server.enqueue({ toolCalls: [{ name: "list", input: { path: "." } }] }, { text: "The workspace has a **README**. 中文 ✅ 😀 ok", chunkSize: 4, delayMs: 5 });
    t.type("what is here?");
    t.keys(["Enter"]);
    await t.waitFor("The workspace has a README.");
    const screen = await t.waitFor(/ idle +anthropic\/claude-test/);
    assert.match(screen, /Tools 1/);
    assert.match(screen, /✓ List \. +ok/);
    // CJK and emoji take two cells in blessed's model as in the terminal: every bordered row ends in column 120.
    const rows = screen.split("\n").filter((row) => row.endsWith("│"));
    assert.ok(rows.some((row) => row.includes("中文 ✅ 😀")));
    assert.deepEqual([...new Set(rows.map((row) => textWidth(row)))], [120]);
    assert.equal(server.connections(), before, "the turn's requests went over the early connection: none was opened for them");
  });

  await st.test("@ completes workspace paths the engine lists: a .env, a key file and a gitignored file are never offered; Tab takes a path", async () => {
    t.type("look at @app");
    const listed = await t.waitFor("notes-app.md");
    assert.doesNotMatch(listed, /app\.key|app\.log/);
    t.keys(["Tab"]);
    await t.waitFor("> look at @notes-app.md");
    t.keys(["C-u"]);
    t.type("@.e");
    await t.waitFor("> @.e");
    assert.doesNotMatch(t.screen(), /\.env\b(?!\.)/, "the .env file is not offered");
    t.keys(["C-u"]);
    await t.waitFor("Type a prompt");
  });

  await st.test("an edit approved from the modal, with its diff in the diff pane", async () => {
    server.enqueue({ toolCalls: [{ name: "write_file", input: { path: "hello.txt", content: "hello tmux\n" } }] }, { text: "Wrote it." });
    t.type("write hello.txt");
    t.keys(["Enter"]);
    const modal = await t.waitFor("Permission: write_file");
    assert.match(modal, /1 \+ hello tmux/);
    assert.ok(!existsSync(join(sb.workspace, "hello.txt")), "nothing written before the answer");
    t.type("y");
    const screen = await t.waitFor("Wrote it.");
    assert.match(screen, /hello\.txt 1\/1/);
    assert.match(screen, /1 \+ hello tmux/);
    assert.equal(readFileSync(join(sb.workspace, "hello.txt"), "utf8"), "hello tmux\n");
    await t.waitFor(/ idle +anthropic\/claude-test/);
  });

  await st.test("a bash command denied: its risky part is named and the model hears no", async () => {
    server.enqueue({ toolCalls: [{ name: "bash", input: { command: "rm -rf build" } }] }, { text: "Understood, I will not." });
    const asked = server.requests.length;
    t.type("clean up");
    t.keys(["Enter"]);
    const modal = await t.waitFor("Permission: bash");
    assert.match(modal, /\$ rm -rf build/);
    assert.match(modal, /Look twice: deletes recursively/);
    t.type("n");
    const screen = await t.waitFor("Understood, I will not.");
    assert.match(screen, /✗ bash rm -rf build/);
    assert.equal(server.requests.length, asked + 2);
    assert.match(JSON.stringify(server.requests.at(-1)!.body.messages.at(-1)), /denied/i);
  });

  await st.test("/exit prints how to resume", async () => {
    t.type("/exit");
    t.keys(["Enter"]);
    const end = await t.waitFor("[exit 0]");
    const [session] = await sb.sessions();
    assert.match(end, new RegExp(`Resume it with: keen --resume ${session!.id}`));
  });
});

// The TUI that --continue opens is the one SIGTERM ends (a Keen TUI in tmux costs ~2 s of CPU); Ctrl-D's
// exit 0 is checked by the other sessions here.
test("--resume shows the stored history and the session continues; --continue opens it again; SIGTERM leaves the terminal sane and exits 143", { skip }, async (st) => {
  const sb = makeSandbox(server.url);
  server.enqueue({ text: "Stored answer one." });
  const first = await sb.run(["run", "--model", MODEL, "--no-stdin", "remember the number 7"]);
  assert.equal(first.code, 0, first.stderr);
  const [session] = await sb.sessions();

  await st.test("--resume shows the stored history and the session continues", async () => {
    const t = new TmuxKeen(["--resume", session!.id.slice(0, 12)], sb.env, sb.workspace);
    open.push(t);
    const screen = await t.waitFor("Stored answer one.");
    assert.match(screen, /> remember the number 7/);
    server.enqueue({ text: "It was 7." });
    t.type("which number?");
    t.keys(["Enter"]);
    await t.waitFor("It was 7.");
    assert.match(JSON.stringify(server.requests.at(-1)!.body), /remember the number 7/);
    t.keys(["C-d"]);
    await t.waitFor(`Resume it with: keen --resume ${session!.id}`);
  });

  const again = new TmuxKeen(["--continue"], sb.env, sb.workspace);
  open.push(again);
  await st.test("--continue opens it again", async () => {
    await again.waitFor("It was 7.");
    await again.waitFor("Type a prompt");
  });

  await st.test("SIGTERM leaves the terminal sane and exits 143", async () => {
    const panePid = again.tmux("list-panes", "-t", again.name, "-F", "#{pane_pid}").trim();
    const child = execFileSync("ps", ["-o", "pid=", "--ppid", panePid], { encoding: "utf8" }).trim().split(/\s+/)[0]!;
    process.kill(Number(child), "SIGTERM");
    const screen = await again.waitFor("[exit 143]");
    assert.ok(!screen.includes("Type a prompt"), "the alternate screen is gone");
    const modes = again.tmux("display-message", "-p", "-t", again.name, "#{alternate_on} #{mouse_any_flag} #{cursor_flag}").trim();
    assert.equal(modes, "0 0 1", "alternate screen off, mouse reporting off, cursor shown");
  });
});

test("keen --replay demo: the recorded prompt is typed in; Enter replays the whole session with its tools and diff", { skip }, async () => {
  const sb = makeSandbox(server.url);
  // The demo makes its workspace in the temporary directory, which the sandbox's env points inside it (removed with it).
  const t = new TmuxKeen(["--replay", "demo", "--replay-speed", "0"], { ...sb.env, ANTHROPIC_API_KEY: undefined }, sb.workspace);
  open.push(t);
  await t.waitFor("> The test in this project fails.");
  assert.match(t.screen(), /mode: auto/);
  t.keys(["Enter"]);
  const screen = await t.waitFor(/Fixed\./, 20_000);
  assert.match(screen, /Tools 3/);
  assert.match(screen, /\d \+ {3}return "Hello, "/);
  t.keys(["C-d"]);
  await t.waitFor("[exit 0]");
});

// Sequential steps of one session in one TUI (a Keen TUI in tmux costs ~2 s of CPU), in auto mode so
// bash runs unasked. Each step is a subtest, so a failure names it.
test("one session in auto mode: Esc and resizing mid-turn, bash output streaming and folding, !command", { skip }, async (st) => {
  const { sb, t } = keen(["--permission-mode", "auto"]);
  await t.waitFor("Type a prompt");

  await st.test("Esc interrupts a streaming turn; resizing to 40x10 and back mid-turn keeps drawing", async () => {
    const words = Array.from({ length: 400 }, (_, i) => `word${i}`).join(" ");
    // The stream stops after 120 chunks (~2 s) and the turn stays open until Esc: the resizes and Esc come
    // mid-turn however slow the machine is (the whole 470-chunk stream could end first on a loaded one).
    server.enqueue({ text: words, chunkSize: 6, delayMs: 15, stallAfterChunks: 120 });
    t.type("talk");
    t.keys(["Enter"]);
    await t.waitFor("word3");
    t.resize(40, 10);
    const small = await t.waitFor(/streaming/);
    assert.ok(!small.includes("Tools"), "side panes collapse at 40x10");
    assert.ok(small.split("\n").every((row) => row.length <= 40));
    t.resize(120, 40);
    await t.waitFor("Tools");
    t.keys(["Escape"]);
    await t.waitFor("Interrupted.");
    await t.waitFor(/ idle /);
  });

  await st.test("bash output streams under its call and folds; !command runs unasked and reaches the model with the next prompt", async () => {
    // The command waits for a file the test creates once the first lines are on screen: streaming, not timing.
    const gate = join(sb.workspace, "go");
    const command = `for i in 1 2 3 4 5 6 7; do echo out-line-$i; done; while [ ! -e ${gate} ]; do sleep 0.1; done; echo out-line-8`;
    server.enqueue({ toolCalls: [{ name: "bash", input: { command } }] }, { text: "Built." });
    t.type("build it");
    t.keys(["Enter"]);
    const live = await t.waitFor("│ out-line-7");
    assert.match(live, /│ out-line-3/);
    assert.doesNotMatch(live, /│ out-line-2/, "the newest five lines");
    writeFileSync(gate, "");
    const done = await t.waitFor("Built.");
    assert.match(done, /8 lines of output \(Ctrl-O shows\)/);
    assert.doesNotMatch(done, /│ out-line-3/);
    t.keys(["C-o"]);
    await t.waitFor("│ out-line-1");
    t.keys(["C-o"]);
    t.type("!echo user-ran-$((6*7)) > mine.txt; cat mine.txt");
    t.keys(["Enter"]);
    await t.waitFor(/✓ ! echo user-ran.* ok/);
    assert.equal(readFileSync(join(sb.workspace, "mine.txt"), "utf8"), "user-ran-42\n");
    server.enqueue({ text: "You ran it." });
    t.type("what did I run?");
    t.keys(["Enter"]);
    const answered = await t.waitFor("You ran it.");
    assert.equal(answered.split("> what did I run?").length, 2, "the prompt shows once, as typed");
    assert.doesNotMatch(answered, /user_shell_command/);
    const last = JSON.stringify(server.requests.at(-1)!.body.messages.at(-1));
    assert.match(last, /user_shell_command/);
    assert.match(last, /user-ran-42/);
  });

  t.keys(["C-d"]);
  await t.waitFor("[exit 0]");
});

test("an unknown --theme is a usage error: one line naming the built-in themes, exit 2, no stack", { skip }, async () => {
  const { t } = keen(["--theme", "zebra"]);
  const screen = await t.waitFor("[exit 2]");
  assert.match(screen, /keen: --theme: unknown theme "zebra"; built-in themes: dark, light, high-contrast/);
  assert.doesNotMatch(screen, /\n\s+at /);
});
