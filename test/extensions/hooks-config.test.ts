import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { collectHooks, digestProjectHooks, hooksSchema, matcherMatches, toolNames } from "../../app/extensions/hooks-config.js";
import { makeTempDir } from "../temp.js";

test("the config schema takes Claude Code's shape and refuses events Keen does not run", () => {
  const hooks = { PreToolUse: [{ matcher: "Bash|Edit", hooks: [{ type: "command", command: "check.sh", timeout: 30 }] }], Stop: [{ hooks: [{ type: "command", command: "done.sh" }] }] };
  assert.deepEqual(hooksSchema().parse(hooks), hooks);
  assert.equal(hooksSchema().safeParse({ PreTooluse: [] }).success, false, "a misspelt event is an error, not a hook that never runs");
  assert.equal(hooksSchema().safeParse({ Stop: [{ hooks: [{ type: "prompt", prompt: "x" }] }] }).success, false);
  assert.equal(hooksSchema().safeParse({ Stop: [{ hooks: [{ type: "command", command: "" }] }] }).success, false);
});

test("matchers: empty and * match all; a regular expression must match the whole name; Claude Code's names select Keen's tools", () => {
  assert.deepEqual(toolNames("bash"), ["bash", "Bash"]);
  assert.deepEqual(toolNames("Edit"), ["Edit", "edit_file"]);
  assert.deepEqual(toolNames("mcp__gh__search"), ["mcp__gh__search"]);
  assert.equal(matcherMatches("", toolNames("bash")), true);
  assert.equal(matcherMatches("*", toolNames("bash")), true);
  assert.equal(matcherMatches("Bash|Edit", toolNames("bash")), true);
  assert.equal(matcherMatches("Bash|Edit", toolNames("edit_file")), true);
  assert.equal(matcherMatches("Bash|Edit", toolNames("write_file")), false);
  assert.equal(matcherMatches("Bas", toolNames("bash")), false, "a part of a name does not match");
  assert.equal(matcherMatches("mcp__gh__.*", toolNames("mcp__gh__search")), true);
  assert.equal(matcherMatches("Bash(", ["Bash("]), true, "an invalid expression matches its exact text");
  assert.equal(matcherMatches("Bash(", toolNames("bash")), false);
});

function workspace() {
  const root = makeTempDir("keen-hooks-");
  mkdirSync(join(root, ".claude", "hooks"), { recursive: true });
  return root;
}

test("user hooks run untrusted; project hooks (.keen/config.json, .claude/settings*.json) wait for a trust bound to their digest", () => {
  const ws = workspace();
  const user = { Stop: [{ hooks: [{ type: "command" as const, command: "user.sh" }] }] };
  const project = { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command" as const, command: "keen.sh", timeout: 5 }] }] };
  writeFileSync(join(ws, ".claude", "settings.json"), JSON.stringify({
    model: "x", hooks: {
      PostToolUse: [{ matcher: "Write", hooks: [{ type: "command", command: "fmt.sh" }, { type: "prompt", prompt: "not a command: left out" }] }],
      SessionEnd: [{ hooks: [{ type: "command", command: "not run by Keen" }] }],
    },
  }));
  const base = { user, userFile: "/u/config.json", project, workspace: ws };
  const untrusted = collectHooks(base);
  assert.deepEqual(untrusted.hooks.map((h) => [h.event, h.command, h.source]), [["Stop", "user.sh", "user"]]);
  assert.deepEqual(untrusted.untrusted.map((h) => [h.event, h.matcher, h.command, h.timeoutMs]), [["PreToolUse", "Bash", "keen.sh", 5000], ["PostToolUse", "Write", "fmt.sh", 60000]]);
  const digest = digestProjectHooks(ws, project)!;
  assert.equal(untrusted.digest, digest);
  const trusted = collectHooks({ ...base, trust: { [ws]: { sha256: digest } } });
  assert.deepEqual(trusted.hooks.map((h) => h.command), ["user.sh", "keen.sh", "fmt.sh"]);
  assert.deepEqual(trusted.untrusted, []);
  // The CLI runner leaves .claude/settings.json to the claude CLI.
  assert.deepEqual(collectHooks({ ...base, trust: { [ws]: { sha256: digest } }, claude: false }).hooks.map((h) => h.command), ["user.sh", "keen.sh"]);
  assert.equal(collectHooks({ ...base, trust: { [ws]: { sha256: digest, declined: true } } }).hooks.length, 1, "declined is not trusted");
});

test("any change to the project hooks or to a script they name changes the digest; other settings do not", () => {
  const ws = workspace();
  const script = join(ws, ".claude", "hooks", "guard.sh");
  writeFileSync(script, "exit 0\n");
  const settings = (command: string, extra = {}) =>
    writeFileSync(join(ws, ".claude", "settings.json"), JSON.stringify({ ...extra, hooks: { PreToolUse: [{ hooks: [{ type: "command", command }] }] } }));
  settings('"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh');
  const first = digestProjectHooks(ws);
  assert.ok(first);
  settings('"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh', { model: "other" });
  assert.equal(digestProjectHooks(ws), first, "settings beside the hooks do not count");
  writeFileSync(script, "exit 2\n");
  const edited = digestProjectHooks(ws);
  assert.notEqual(edited, first, "the script's content counts");
  settings("sh .claude/hooks/guard.sh");
  assert.notEqual(digestProjectHooks(ws), edited, "the command counts");
  assert.notEqual(digestProjectHooks(ws, { Stop: [{ hooks: [{ type: "command", command: "x" }] }] }), digestProjectHooks(ws), ".keen/config.json's hooks count");
  assert.equal(digestProjectHooks(makeTempDir("keen-hooks-none-")), undefined);
});

test("a .claude/settings.json that is not JSON is a warning, never fatal", () => {
  const ws = workspace();
  writeFileSync(join(ws, ".claude", "settings.json"), "{ nope");
  const collected = collectHooks({ userFile: "/u", workspace: ws });
  assert.deepEqual(collected.hooks, []);
  assert.match(collected.warnings[0]!, /settings\.json: not valid JSON .*its hooks are not used/);
});
