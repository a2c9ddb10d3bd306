import { after, before, beforeEach, test } from "node:test";
import assert from "node:assert/strict";
import { startMockLLMServer, type MockLLMServer } from "../fakes/mock-llm-server.js";
import { textWidth } from "../../app/tui/text.js";
import { makeSandbox } from "./harness.js";
import { TMUX_MISSING, TmuxKeen } from "./tmux.js";

/*
 * The daily-driver keys of the TUI in a real terminal (tmux): what only a
 * real terminal shows — how it joins emoji sequences, job control.
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

function keen(args: string[] = [], size = { cols: 100, rows: 30 }, env: Record<string, string | undefined> = {}) {
  const sb = makeSandbox(server.url);
  const t = new TmuxKeen(["--model", MODEL, ...args], { ...sb.env, ...env }, sb.workspace, size);
  open.push(t);
  return { sb, t };
}

test("ZWJ emoji sequences: tmux joins them, so Keen sends their parts and the rest of each line stays in place", { skip }, async () => {
  const { t } = keen();
  server.enqueue({ text: "family 👨‍👩‍👧 then the rest END\n\nrainbow 🏳️‍🌈 flag END\n\nfire ❤️‍🔥 heart END" });
  await t.waitFor("Type a prompt");
  t.type("family 👨‍👩‍👧 typed END");
  t.keys(["Enter"]);
  const screen = await t.waitFor("heart END");
  await t.waitFor(/ idle +anthropic/);
  const rows = t.screen().split("\n");
  for (const text of ["family 👨👩👧 typed END", "family 👨👩👧 then the rest END", "rainbow 🏳️🌈 flag END", "fire ❤️🔥 heart END"]) {
    assert.ok(rows.some((row) => row.startsWith(`│${text} `) || row.startsWith(`│> ${text} `)), `${text} not intact:\n${screen}`);
  }
  // Every bordered row still ends at the terminal's last column.
  const bordered = rows.filter((row) => row.endsWith("│"));
  assert.deepEqual([...new Set(bordered.map((row) => textWidth(row)))], [100], bordered.join("\n"));
  t.keys(["C-d"]);
  await t.waitFor("[exit 0]");
});
