import { test } from "node:test";
import assert from "node:assert/strict";
import type { Command } from "../../protocol/commands.js";
import { INIT_PROMPT } from "../../app/tui/slash.js";
import { draft as d } from "../fakes/fake-engine.js";
import { TuiHarness } from "./harness.js";
import { helpLines } from "../../app/tui/views/lists.js";
import { loadTheme } from "../../themes/index.js";

/*
 * Custom slash commands in the TUI, on a whole screen with the fake engine:
 * the engine's `list-commands` answer feeds `/` completion and the help, and
 * a typed `/name args` goes to the engine as a `prompt` naming the command
 * (the engine expands it: test/e2e/extensions.test.ts). `/init` asks for an AGENTS.md.
 */

const COMMANDS = [
  { name: "review", description: "Review a file", argument_hint: "<file>", source: "claude", file: ".claude/commands/review.md" },
  { name: "deploy:check", description: "Check before deploying", source: "project", file: ".keen/commands/deploy/check.md" },
  // A custom command never replaces Keen's own.
  { name: "undo", description: "SHADOWED custom undo", source: "project", file: ".keen/commands/undo.md" },
];

async function quit(h: TuiHarness): Promise<void> {
  await h.keys("\x03");
  await h.keys("\x04");
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the TUI did not exit:\n${h.text()}`)), 5000).unref());
  await Promise.race([h.result, timeout]);
}

const prompts = (h: TuiHarness) => h.engine.sent.filter((c): c is Extract<Command, { kind: "prompt" }> => c.kind === "prompt");

test("/ completion and /help list the custom commands; /review with arguments is sent as the command", async () => {
  const h = new TuiHarness(110, 34);
  h.engine.answers["list-commands"] = { ok: true, data: COMMANDS };
  h.start();
  await h.waitFor("Type a prompt");
  try {
    await h.keys("/");
    await h.keys("d");
    await h.waitFor(/\/deploy:check\s+Check before deploying/);
    await h.keys("\x7fre");
    await h.waitFor(/\/review <file>\s+Review a file/);
    await h.keys("\x7f\x7fu");
    await h.waitFor("/undo");
    assert.doesNotMatch(h.text(), /SHADOWED/);
    await h.keys("\x7f\x7f");

  // /help asks the engine again; its list (below the keys, past one screen) names them.
  const asked = h.engine.sent.filter((c) => c.kind === "list-commands").length;
  await h.keys("/help\r");
  await h.waitFor("Keys");
  await h.keys("\x1b");
  assert.ok(h.engine.sent.filter((c) => c.kind === "list-commands").length > asked, "/help asks for the commands again");
  const help = helpLines(100, loadTheme("dark", {}), COMMANDS.map((c) => ({ name: c.name, help: c.description }))).join("\n").replace(/\x1b\[[0-9;]*m/g, "");
  assert.match(help, /Custom commands[\s\S]*\/deploy:check\s+Check before deploying/);
  assert.doesNotMatch(help, /SHADOWED/);
  await h.keys("/review src/a.ts \"error handling\"\r");
  await h.waitFor("/review src/a.ts");
  assert.deepEqual(prompts(h).map((p) => [p.command, p.text]), [["review", "src/a.ts \"error handling\""]]);
  } finally {
    await quit(h);
  }
});

test("/init asks the model to write AGENTS.md; an unknown /word stays a plain prompt", async () => {
  const h = new TuiHarness(100, 30);
  h.engine.answers["list-commands"] = { ok: true, data: COMMANDS };
  h.start();
  await h.waitFor("Type a prompt");
  try {
  await h.keys("/init\r");
  await h.waitFor("AGENTS.md");
  h.engine.emit(d.result());
  await h.keys("/nothing here\r");
  await h.waitFor("/nothing here");
  assert.deepEqual(prompts(h).map((p) => [p.command, p.text]), [[undefined, INIT_PROMPT], [undefined, "/nothing here"]]);
  } finally {
    await quit(h);
  }
});

test("/skills lists the engine's skills and skipped folders; Enter on one starts a prompt using it; /help names /skills", async () => {
  const h = new TuiHarness(120, 30);
  h.engine.answers["list-commands"] = { ok: true, data: [] };
  h.engine.answers["list-skills"] = {
    ok: true,
    data: {
      skills: [
        { name: "release-notes", description: "Write release notes", path: "/home/me/.config/keen/skills/release-notes", source: "user" },
        { name: "review", description: "Team review", path: "/w/.claude/skills/review", source: "project" },
      ],
      skipped: [{ path: "/w/.keen/skills/broken", source: "project", reason: "SKILL.md's frontmatter has no description" }],
    },
  };
  h.start();
  await h.waitFor("Type a prompt");
  try {
    await h.keys("/skills\r");
    await h.waitFor(/Skills \(2; Enter starts a prompt using one\)/);
    assert.match(h.text(), /release-notes\s+Write release notes \(user: \/home\/me\/\.config\/keen\/skills\/release-notes\)/);
    assert.match(h.text(), /review\s+Team review \(project: \/w\/\.claude\/skills\/review\)/);
    assert.match(h.text(), /✗ \/w\/\.keen\/skills\/broken\s+skipped: SKILL\.md's frontmatter has no description/);
    assert.ok(h.engine.sent.some((c) => c.kind === "list-skills"));
    await h.keys("\x1b[B\r");
    await h.waitFor("Use the review skill to");
    assert.deepEqual(prompts(h), [], "nothing is sent until the user finishes the prompt");
    await h.keys("check my diff\r");
    await h.waitFor("check my diff");
    assert.deepEqual(prompts(h).map((p) => p.text), ["Use the review skill to check my diff"]);
  } finally {
    await quit(h);
  }
  const help = helpLines(100, loadTheme("dark", {})).join("\n").replace(/\x1b\[[0-9;]*m/g, "");
  assert.match(help, /\/skills\s+list the Agent Skills the model can load/);
});
