import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startMockLLMServer, type MockLLMServer } from "../fakes/mock-llm-server.js";
import { makeSandbox } from "./harness.js";
import { TMUX_MISSING, TmuxKeen } from "./tmux.js";

/*
 * Rewind and fork in a real terminal, against the real engine and store:
 * Esc Esc and /rewind two levels back (conversation only, then with the
 * files), a refused files rewind, /fork, and each session resumed by another
 * process showing its own state.
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

const edit = (id: string, from: string, to: string) => ({ toolCalls: [{ id, name: "edit_file", input: { path: "a.txt", old_string: from, new_string: to } }] });

/** The text of every message of the model's last request, to see what history it was sent. */
function lastHistory(): string {
  const body = server.requests.at(-1)?.body as { messages?: { content: unknown }[] } | undefined;
  return JSON.stringify(body?.messages ?? []);
}

async function idle(t: TmuxKeen): Promise<void> {
  await t.waitFor(/ idle +anthropic/, 20_000);
}

async function send(t: TmuxKeen, text: string, answer: string): Promise<void> {
  t.type(text);
  t.keys(["Enter"]);
  await t.waitFor(answer, 20_000);
  await idle(t);
}

test("tmux: rewind two levels (conversation, then conversation and files), a refused files rewind, /fork; each session resumes in its own state", { skip }, async () => {
  const sb = makeSandbox(server.url);
  const file = join(sb.workspace, "a.txt");
  writeFileSync(file, "v0\n");
  const keen = (args: string[]) => {
    const t = new TmuxKeen(["--model", MODEL, "--permission-mode", "auto", ...args], sb.env, sb.workspace, { cols: 120, rows: 40 });
    open.push(t);
    return t;
  };
  const t = keen([]);
  await t.waitFor("Type a prompt", 20_000);
  server.enqueue(edit("e1", "v0", "v1"), { text: "did-first" });
  await send(t, "first", "did-first");
  server.enqueue(edit("e2", "v1", "v2"), { text: "did-second" });
  await send(t, "second", "did-second");
  server.enqueue({ text: "did-third" });
  await send(t, "third", "did-third");
  assert.equal(readFileSync(file, "utf8"), "v2\n");

  // Level 1, Esc Esc: the newest prompt, the conversation only.
  // Both in one send-keys: a short-lived "Esc again" note is no sure thing to catch on a loaded machine.
  t.keys(["Escape", "Escape"]);
  const picker = await t.waitFor("Rewind: go back to before a prompt");
  assert.match(picker, /3 +third[\s\S]*2 +second[\s\S]*1 +first/);
  t.keys(["Enter"]);
  await t.waitFor("Rewind: what to take back");
  t.keys(["Enter"]); // conversation, the first choice
  let screen = await t.waitFor("Rewound to before prompt 3");
  await t.waitFor("│> third");
  screen = t.screen();
  assert.doesNotMatch(screen, /did-third/);
  assert.match(screen, /did-second/);
  assert.equal(readFileSync(file, "utf8"), "v2\n", "a conversation rewind leaves the files");

  // Level 2, /rewind: the second prompt, conversation and files.
  t.keys(["C-u"]);
  t.type("/rewind");
  t.keys(["Enter"]);
  screen = await t.waitFor("Rewind: go back to before a prompt");
  assert.doesNotMatch(screen, /3 +third/, "the rewound prompt is no longer a checkpoint");
  t.keys(["Enter"]);
  await t.waitFor("Changed by it and later turns: a.txt");
  t.type("b");
  await t.waitFor("Rewound to before prompt 2");
  await t.waitFor("│> second");
  screen = t.screen();
  assert.doesNotMatch(screen, /did-second/);
  assert.match(screen, /restored a\.txt/);
  assert.match(screen, /a\.txt 2\/2 \+1 -1 reverted/, "the diff pane marks the second turn's edit reverted");
  assert.equal(readFileSync(file, "utf8"), "v1\n");

  // What the model is sent next has neither rewound turn.
  t.keys(["C-u"]);
  server.enqueue({ text: "did-second-again" });
  await send(t, "second again", "did-second-again");
  assert.match(lastHistory(), /did-first/);
  assert.doesNotMatch(lastHistory(), /did-second"|did-third/);

  // A files rewind over a file changed outside Keen is refused, naming it, and changes nothing.
  writeFileSync(file, "mine\n");
  t.type("/rewind");
  t.keys(["Enter"]);
  await t.waitFor("Rewind: go back to before a prompt");
  t.keys(["Down", "Enter"]); // the first prompt
  await t.waitFor("Rewind: what to take back");
  t.type("f");
  await t.waitFor(/Rewind refused, nothing was changed: a\.txt changed/);
  assert.equal(readFileSync(file, "utf8"), "mine\n");
  assert.match(t.screen(), /did-second-again/);

  // Fork: a new session with this history; the original stays as it is.
  t.type("/fork");
  t.keys(["Enter"]);
  await t.waitFor("Forked: you are in session");
  screen = await t.waitFor(/[0-9a-f]{8}-[0-9a-f]{4} \(fork of [0-9a-f]{8}-[0-9a-f]{4}\)/);
  const [, fork, parent] = /([0-9a-f]{8}-[0-9a-f]{4}) \(fork of ([0-9a-f]{8}-[0-9a-f]{4})\)/.exec(screen)!;
  assert.notEqual(fork, parent);
  server.enqueue({ text: "did-in-fork" });
  await send(t, "in the fork", "did-in-fork");
  assert.match(lastHistory(), /did-second-again/);
  t.keys(["C-d"]);
  await t.waitFor("[exit 0]", 20_000);

  const sessions = await sb.sessions();
  const full = (prefix: string) => sessions.find((s) => s.id.startsWith(prefix))!.id;
  assert.equal(sessions.find((s) => s.id === full(fork!))!.parent?.id, full(parent!), "the fork records its parent");
  // Another process resumes each: the original (--resume) without the rewound turns nor the fork's, then
  // the fork (picked in /sessions, in the same process: a Keen TUI in tmux costs ~2 s of CPU) with its own turn.
  const other = keen(["--resume", full(parent!)]);
  screen = await other.waitFor("did-second-again", 20_000);
  assert.doesNotMatch(screen, /did-third|did-in-fork/);
  assert.doesNotMatch(screen, /did-second(?!-again)/);
  other.type("/sessions");
  other.keys(["Enter"]);
  screen = await other.waitFor(/Sessions \(Enter resumes\)[\s\S]*\(this one\)/, 20_000);
  // The rows' 8-character ids can be the same for two sessions made within a minute (UUIDv7): the
  // fork is the row saying whose fork it is, the original the one marked as this one.
  const forkRow = screen.indexOf(`fork of ${parent!.slice(0, 8)}`);
  const thisRow = screen.indexOf("(this one)");
  assert.ok(forkRow >= 0 && thisRow >= 0, screen);
  // Newest first: the fork, unless the resume moved the original up.
  other.keys(forkRow < thisRow ? ["Enter"] : ["Down", "Enter"]);
  screen = await other.waitFor("did-in-fork", 20_000);
  assert.match(screen, /did-first[\s\S]*did-second-again[\s\S]*did-in-fork/);
  other.keys(["C-d"]);
  await other.waitFor(`Resume it with: keen --resume ${full(fork!)}`, 20_000);
  await other.waitFor("[exit 0]", 20_000);
});
