import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";
import { runScript, startStdio } from "./stdio-client.js";

/*
 * Agent Skills through bin/keen (docs/extensions.md): listed by name and
 * description in the system prompt, loaded by the model with the skill tool,
 * their other files read with read_file even where they live in Keen's
 * config directory (outside the workspace, otherwise refused).
 */
const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();

function write(path: string, text: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

const systemOf = (body: Record<string, any>): string =>
  typeof body.system === "string" ? body.system : (body.system as { text: string }[]).map((b) => b.text).join("\n");
/** The tool results the model got in request `body`, as [tool_use_id, is_error, text]. */
const resultsIn = (body: Record<string, any>): [string, boolean, string][] =>
  body.messages.at(-1).content
    .filter((b: { type: string }) => b.type === "tool_result")
    .map((b: any) => [b.tool_use_id, b.is_error ?? false, typeof b.content === "string" ? b.content : b.content.map((c: any) => c.text).join("")]);

function skillFiles(sb: ReturnType<typeof makeSandbox>) {
  const userSkill = join(sb.env.KEEN_HOME!, "skills", "release-notes");
  write(join(userSkill, "SKILL.md"), [
    "---", "name: release-notes", "description: Write release notes from the git log. Use when asked for a changelog.", "---",
    "# Release notes", "USER-SKILL-BODY: read template.md first, then fill it in.", "",
  ].join("\n"));
  write(join(userSkill, "template.md"), "TEMPLATE-CONTENT: ## Added / ## Fixed\n");
  write(join(userSkill, "scripts", "collect.sh"), "git log --oneline\n");
  // The same name in the project replaces the user's; a broken one is skipped.
  write(join(sb.workspace, ".claude", "skills", "review", "SKILL.md"), "---\nname: review\ndescription: Review a diff the way this team does.\n---\nPROJECT-REVIEW\n");
  write(join(sb.env.KEEN_HOME!, "skills", "review", "SKILL.md"), "---\nname: review\ndescription: The user's own review.\n---\nUSER-REVIEW\n");
  write(join(sb.workspace, ".keen", "skills", "broken", "SKILL.md"), "---\nname: broken\n---\nno description\n");
  return userSkill;
}

test("a skill is listed in the system prompt, loaded by the model, and its file outside the workspace read; nothing else of the config dir is", async () => {
  const sb = makeSandbox(server.url);
  mkdirSync(join(sb.workspace, ".git"));
  const folder = skillFiles(sb);
  server.enqueue(
    { toolCalls: [{ id: "toolu_skill", name: "skill", input: { name: "release-notes" } }] },
    {
      toolCalls: [
        { id: "toolu_tpl", name: "read_file", input: { path: join(folder, "template.md") } },
        { id: "toolu_cfg", name: "read_file", input: { path: join(sb.env.KEEN_HOME!, "skills", "loose.txt") } },
      ],
    },
    { text: "Notes written." },
  );
  // In the skills directory, but in no skill's folder: still Keen's own config directory.
  write(join(sb.env.KEEN_HOME!, "skills", "loose.txt"), "CONFIG-SECRET\n");
  const r = await sb.run(["run", "--headless", "--model", MODEL, "--no-stdin", "write the release notes"]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(server.unexpected, []);
  assert.equal(server.pending(), 0);

  // The prompt names the skills (project over user for "review"), not their bodies; the broken one is not there.
  const system = systemOf(server.requests[0]!.body);
  assert.ok(system.includes(`- release-notes: Write release notes from the git log. Use when asked for a changelog. (${folder})`), system);
  assert.ok(system.includes(`- review: Review a diff the way this team does. (${join(sb.workspace, ".claude", "skills", "review")})`), system);
  assert.doesNotMatch(system, /USER-SKILL-BODY|The user's own review|broken/);
  assert.ok(server.requests[0]!.body.tools.some((t: { name: string }) => t.name === "skill"));
  assert.match(r.stderr, /keen: skill skipped: .*\.keen\/skills\/broken: SKILL\.md's frontmatter has no description/);

  // The skill tool gave the body and the folder's other files.
  const [[id, isError, loaded]] = resultsIn(server.requests[1]!.body) as [[string, boolean, string]];
  assert.deepEqual([id, isError], ["toolu_skill", false]);
  assert.match(loaded, /USER-SKILL-BODY: read template\.md first/);
  assert.match(loaded, /- scripts\/collect\.sh\n- template\.md/);
  assert.doesNotMatch(loaded, /^---|name: release-notes/m);

  // The skill's file was read; a file of the config directory outside any skill folder was still refused.
  const reads = resultsIn(server.requests[2]!.body);
  assert.deepEqual(reads[0]!.slice(0, 2), ["toolu_tpl", false]);
  assert.match(reads[0]![2], /TEMPLATE-CONTENT/);
  assert.deepEqual(reads[1]!.slice(0, 2), ["toolu_cfg", true]);
  assert.match(reads[1]![2], /Keen's own config or data/);
  assert.doesNotMatch(reads[1]![2], /CONFIG-SECRET/);

  // The stream (and the store) has the skill-loaded event after the call's result.
  const lines = parseLines(r.stdout);
  const kinds = lines.map((l) => l.kind);
  assert.equal(kinds[kinds.indexOf("tool-result") + 1], "skill-loaded");
  const event = lines.find((l) => l.kind === "skill-loaded")!;
  assert.deepEqual([event.name, event.path, event.tool_call_id], ["release-notes", folder, "toolu_skill"]);
  const shown = await sb.show(lines.at(-1)!.session_id as string);
  assert.deepEqual(shown.events.filter((e) => e.kind === "skill-loaded").map((e) => e.name), ["release-notes"]);
});

test("list-skills over stdio: name, description, folder and source, project over user, skipped ones with the reason", async () => {
  const sb = makeSandbox(server.url);
  mkdirSync(join(sb.workspace, ".git"));
  const folder = skillFiles(sb);
  const run = await runScript(sb.run, ["--model", MODEL], [{ kind: "list-skills", id: "s" }]);
  assert.equal(run.code, 0, run.stderr);
  const listed = run.response("s");
  assert.equal(listed.ok, true);
  assert.deepEqual(listed.data.skills, [
    { name: "release-notes", description: "Write release notes from the git log. Use when asked for a changelog.", path: folder, source: "user" },
    { name: "review", description: "Review a diff the way this team does.", path: join(sb.workspace, ".claude", "skills", "review"), source: "project" },
  ]);
  assert.deepEqual(listed.data.skipped, [
    { path: join(sb.workspace, ".keen", "skills", "broken"), source: "project", reason: "SKILL.md's frontmatter has no description (the model chooses a skill by it)" },
  ]);
});

test("an unknown skill name answers the model with the skills there are", async () => {
  const sb = makeSandbox(server.url);
  skillFiles(sb);
  server.enqueue({ toolCalls: [{ id: "toolu_x", name: "skill", input: { name: "nope" } }] }, { text: "ok" });
  const r = await sb.run(["run", "--headless", "--model", MODEL, "--no-stdin", "go"]);
  assert.equal(r.code, 0, r.stderr);
  const [[, isError, text]] = resultsIn(server.requests[1]!.body) as [[string, boolean, string]];
  assert.equal(isError, true);
  assert.equal(text, 'No skill named "nope". Skills: release-notes, review.');
  assert.ok(!parseLines(r.stdout).some((l) => l.kind === "skill-loaded"));
});

test("neither a command's allowed-tools nor a skill's pre-approves a tool: in ask mode bash still asks (they never widen permissions)", async () => {
  const sb = makeSandbox(server.url);
  mkdirSync(join(sb.workspace, ".git"));
  // In Claude Code both would run `git status` unasked; in Keen they only narrow (commands) or are ignored (skills).
  write(join(sb.workspace, ".claude", "commands", "status.md"), "---\nallowed-tools: Bash(git status:*), Read\n---\nShow the status.\n");
  write(join(sb.workspace, ".keen", "skills", "git-status", "SKILL.md"), "---\nname: git-status\ndescription: Show the status.\nallowed-tools: Bash(git status:*)\n---\nRun git status.\n");
  server.enqueue(
    { toolCalls: [{ id: "toolu_c", name: "bash", input: { command: "git status" } }] }, { text: "Denied, as you wish." },
    { toolCalls: [{ id: "toolu_s", name: "skill", input: { name: "git-status" } }] },
    { toolCalls: [{ id: "toolu_b", name: "bash", input: { command: "git status" } }] }, { text: "Denied again." },
  );
  // --sandbox off: a sandboxed bash could run unasked in accept-edits; in ask mode it asks either way.
  const client = startStdio(["--model", MODEL, "--permission-mode", "ask", "--sandbox", "off"], sb.env, sb.workspace, 60_000);
  const answerAll = async (id: string) => {
    for (;;) {
      const line = await client.next((l) => l.kind === "permission-request" || (l.kind === "response" && l.id === id));
      if (line.kind === "response") return line;
      client.send({ kind: "permission-response", request_id: line.request_id, decision: "deny" });
    }
  };
  client.send({ kind: "prompt", id: "c", command: "status", text: "" });
  assert.equal((await answerAll("c")).ok, true);
  client.send({ kind: "prompt", id: "s", text: "status please" });
  assert.equal((await answerAll("s")).ok, true);
  const { code, stderr } = await client.end();
  assert.equal(code, 0, stderr);
  assert.deepEqual(server.requests[0]!.body.tools.map((t: { name: string }) => t.name).sort(), ["bash", "read_file"], "the command narrowed the tools");
  const asked = client.lines.filter((l) => l.kind === "permission-request").map((l) => [l.tool_name, l.tool_call_id]);
  assert.deepEqual(asked, [["bash", "toolu_c"], ["bash", "toolu_b"]], "bash asked both times; the skill tool itself never asks");
  assert.deepEqual(client.lines.filter((l) => l.kind === "tool-result").map((l) => [l.tool_call_id, l.is_error]), [["toolu_c", true], ["toolu_s", false], ["toolu_b", true]]);
  assert.equal(server.pending(), 0);
});
