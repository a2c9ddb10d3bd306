import { after, before, beforeEach, test } from "node:test";
import assert from "node:assert/strict";
import { startMockLLMServer, type MockLLMServer } from "../fakes/mock-llm-server.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { textWidth } from "../../app/tui/text.js";
import { KEEN_BIN, makeSandbox } from "./harness.js";
import { TMUX_MISSING, TmuxKeen } from "./tmux.js";

/*
 * The daily-driver keys of the TUI in a real terminal (tmux): what only a
 * real terminal shows — how it joins emoji sequences, job control — and
 * /export through the real store.
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

const bellFlag = (t: TmuxKeen) => t.tmux("display-message", "-p", "-t", t.name, "#{window_bell_flag}").trim();

function keen(config: Record<string, unknown> = {}) {
  const sb = makeSandbox(server.url, config);
  const t = new TmuxKeen(["--model", MODEL], sb.env, sb.workspace, { cols: 100, rows: 30 });
  open.push(t);
  return { sb, t };
}

test("Ctrl-Z suspends to the shell and fg brings the whole screen back, the typed prompt still there", { skip }, async () => {
  const sb = makeSandbox(server.url);
  // An interactive shell with job control, as a user has; Keen runs in it.
  const t = new TmuxKeen(["--norc", "--noprofile", "-i"], { ...sb.env, PS1: "shell$ " }, sb.workspace, { cols: 100, rows: 30 }, "bash");
  open.push(t);
  server.enqueue({ text: "Answer before the pause." });
  await t.waitFor("shell$");
  t.type(`${KEEN_BIN} --model ${MODEL}`);
  t.keys(["Enter"]);
  await t.waitFor("Type a prompt");
  t.type("hello");
  t.keys(["Enter"]);
  await t.waitFor("Answer before the pause.");
  await t.waitFor(/ idle +anthropic/);
  t.type("half typed");
  await t.waitFor("> half typed");
  t.keys(["C-z"]);
  const shell = await t.waitFor(/Stopped/);
  assert.doesNotMatch(shell, /Type a prompt|Answer before the pause/, "the shell's own screen, not Keen's");
  t.type("echo still-here");
  t.keys(["Enter"]);
  await t.waitFor(/^still-here/m);
  t.type("fg");
  t.keys(["Enter"]);
  const back = await t.waitFor("> half typed");
  assert.match(back, /Answer before the pause\./);
  assert.match(back, /Tools/);
  assert.doesNotMatch(back, /still-here|Stopped/);
  const bordered = back.split("\n").filter((row) => row.endsWith("│"));
  assert.ok(bordered.length > 20, back);
  assert.deepEqual([...new Set(bordered.map((row) => textWidth(row)))], [100]);
  // Keys work again: clear the prompt, leave.
  t.keys(["C-u"]);
  await t.waitFor("Type a prompt");
  t.keys(["C-d"]);
  // Keen ended (not stopped again): the shell prompts right after its resume hint.
  await t.waitFor(/Resume it with: keen --resume \S+\n+shell\$/);
});

// The default config's quiet bell is checked in this session too: a Keen TUI in tmux costs ~2 s of CPU.
test("/export writes the same transcript `keen sessions show` prints, as markdown, into the workspace; by default a finished turn rings no bell while focused", { skip }, async () => {
  const { sb, t } = keen();
  server.enqueue({ text: "The **answer**, with a list:\n\n- one\n- two" });
  await t.waitFor("Type a prompt");
  assert.equal(bellFlag(t), "0");
  t.type("export me");
  t.keys(["Enter"]);
  await t.waitFor(/ idle +anthropic/);
  await t.waitFor("two");
  assert.equal(bellFlag(t), "0", "the default config rings no bell while focused");
  t.type("/export");
  t.keys(["Enter"]);
  await t.waitFor("Exported the transcript");
  t.keys(["C-d"]);
  await t.waitFor("[exit 0]");
  const [session] = await sb.sessions();
  const exported = readFileSync(join(sb.workspace, `keen-${session!.id}.md`), "utf8");
  // The command through main() in this process (a Keen start less): what it prints is Keen's own; run-store,
  // headless-replay and terminal-output run it as a real process.
  const shown = await sb.main(["sessions", "show", session!.id]);
  assert.equal(shown.code, 0, shown.stderr);
  const body = (text: string, blocks: number) => text.split("\n\n").slice(blocks).join("\n\n");
  assert.match(exported, /^# export me\n\n/);
  assert.match(exported, /> export me\n/);
  assert.match(exported, /The \*\*answer\*\*, with a list:\n\n- one\n- two\n/);
  assert.equal(body(exported, 2), body(shown.stdout, 1));
});

// One TUI (a Keen TUI in tmux costs ~2 s of CPU) for two checks of one turn: how the terminal joins
// emoji sequences, and the bell that config tui.notify "always" rings when the turn ends.
test("ZWJ emoji sequences: tmux joins them, so Keen sends their parts and the rest of each line stays in place; config tui.notify always: the finished turn rings the bell, which tmux flags on the window (the default's quiet is checked with /export)", { skip }, async (st) => {
  const { t } = keen({ tui: { notify: "always" } });
  server.enqueue({ text: "family 👨‍👩‍👧 then the rest END\n\nrainbow 🏳️‍🌈 flag END\n\nfire ❤️‍🔥 heart END" });
  await t.waitFor("Type a prompt");
  assert.equal(bellFlag(t), "0");
  t.type("family 👨‍👩‍👧 typed END");
  t.keys(["Enter"]);
  const screen = await t.waitFor("heart END");
  await t.waitFor(/ idle +anthropic/);

  await st.test("every ZWJ sequence is intact and every bordered row ends at the terminal's last column", () => {
    const rows = t.screen().split("\n");
    for (const text of ["family 👨👩👧 typed END", "family 👨👩👧 then the rest END", "rainbow 🏳️🌈 flag END", "fire ❤️🔥 heart END"]) {
      assert.ok(rows.some((row) => row.startsWith(`│${text} `) || row.startsWith(`│> ${text} `)), `${text} not intact:\n${screen}`);
    }
    const bordered = rows.filter((row) => row.endsWith("│"));
    assert.deepEqual([...new Set(bordered.map((row) => textWidth(row)))], [100], bordered.join("\n"));
  });

  await st.test("the finished turn rang the bell", () => {
    assert.equal(bellFlag(t), "1");
  });

  t.keys(["C-d"]);
  await t.waitFor("[exit 0]");
});
