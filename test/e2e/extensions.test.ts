import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox } from "./harness.js";
import { runScript } from "./stdio-client.js";

/*
 * Extensibility through repository text (docs/extensions.md): layered
 * AGENTS.md files in the system prompt, custom slash commands from
 * `.claude/commands/` and `.keen/commands/` run over keen stdio.
 */
const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();

function write(path: string, text: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

const systemOf = (body: Record<string, any>): string =>
  typeof body.system === "string" ? body.system : (body.system as { text: string }[]).map((b) => b.text).join("\n");
const lastUserText = (body: Record<string, any>): string => {
  const user = [...(body.messages as { role: string; content: unknown }[])].reverse().find((m) => m.role === "user")!;
  return typeof user.content === "string" ? user.content : (user.content as { type: string; text?: string }[]).map((b) => b.text ?? "").join("");
};

test("AGENTS.md files go into the system prompt in order: user config, workspace root, then down to the working directory, CLAUDE.md where no AGENTS.md", async () => {
  const sb = makeSandbox(server.url);
  mkdirSync(join(sb.workspace, ".git"));
  write(join(sb.env.KEEN_HOME!, "AGENTS.md"), "USER-RULE: answer in English.\n");
  write(join(sb.workspace, "AGENTS.md"), "ROOT-RULE: run npm test.\n");
  write(join(sb.workspace, "CLAUDE.md"), "ROOT-CLAUDE: never read, an AGENTS.md is beside it.\n");
  write(join(sb.workspace, "pkg", "CLAUDE.md"), "PKG-RULE: from CLAUDE.md.\n");
  write(join(sb.workspace, "pkg", "sub", "AGENTS.md"), "SUB-RULE: nearest.\n");
  write(join(sb.workspace, "other", "AGENTS.md"), "OTHER-RULE: not on the path.\n");
  server.enqueue({ text: "ok" });
  // --sandbox off: a text-only turn about the system prompt; the sandbox (bash only) plays no role, and warming it costs CPU.
  const r = await sb.run(["run", "--model", MODEL, "--sandbox", "off", "--no-stdin", "hi"], { cwd: join(sb.workspace, "pkg", "sub") });
  assert.equal(r.code, 0, r.stderr);
  const system = systemOf(server.requests.at(-1)!.body);
  const order = ["USER-RULE", "ROOT-RULE", "PKG-RULE", "SUB-RULE"].map((mark) => system.indexOf(mark));
  assert.ok(order.every((at) => at >= 0), system);
  assert.deepEqual([...order].sort((a, b) => a - b), order, "general first, nearest last");
  assert.doesNotMatch(system, /ROOT-CLAUDE|OTHER-RULE/);
  // Each file's origin is named.
  for (const origin of ["## user config: AGENTS.md", "## AGENTS.md", "## pkg/CLAUDE.md", "## pkg/sub/AGENTS.md"]) assert.ok(system.includes(origin), origin);
});

test("instructions past the budget are cut with a note naming the file; the nearest file is kept whole", async () => {
  const sb = makeSandbox(server.url);
  mkdirSync(join(sb.workspace, ".git"));
  write(join(sb.workspace, "AGENTS.md"), `ROOT-START ${"x".repeat(30_000)} ROOT-END`);
  write(join(sb.workspace, "pkg", "AGENTS.md"), "PKG-WHOLE\n");
  server.enqueue({ text: "ok" });
  // --sandbox off: as above, a text-only turn.
  const r = await sb.run(["run", "--model", MODEL, "--sandbox", "off", "--no-stdin", "hi"], { cwd: join(sb.workspace, "pkg") });
  assert.equal(r.code, 0, r.stderr);
  const system = systemOf(server.requests.at(-1)!.body);
  assert.match(system, /PKG-WHOLE/);
  assert.match(system, /ROOT-START/);
  assert.doesNotMatch(system, /ROOT-END/);
  assert.match(system, /\[cut: \d+ of \d+ characters left out; read .*AGENTS\.md for the rest\]/);
});

test("custom commands from .claude/commands and .keen/commands: listed, and run over stdio with arguments, @includes through the guard and narrowed tools", async () => {
  const sb = makeSandbox(server.url);
  mkdirSync(join(sb.workspace, ".git"));
  write(join(sb.workspace, ".claude", "commands", "review.md"), [
    "---", "description: Review a file", "argument-hint: <file> <focus>", "---",
    "Review $1 with a focus on $2. Everything: $ARGUMENTS. See @notes.txt and @.env and @nothing-here.", "",
  ].join("\n"));
  write(join(sb.workspace, ".keen", "commands", "deploy", "check.md"), [
    "---", "description: Check before deploying", "allowed-tools: Read, grep", "---", "Check the deploy for $ARGUMENTS.", "",
  ].join("\n"));
  // The same name in .claude/commands is replaced by .keen/commands'.
  write(join(sb.workspace, ".claude", "commands", "deploy", "check.md"), "CLAUDE VERSION\n");
  write(join(sb.workspace, ".keen", "commands", "plain.md"), "Say hello.\n");
  write(join(sb.workspace, "notes.txt"), "NOTES-CONTENT\n");
  write(join(sb.workspace, ".env"), "SECRET=do-not-send\n");
  server.enqueue({ text: "Reviewed." }, { text: "Checked." }, { text: "Hello." });
  const run = await runScript(sb.run, ["--model", MODEL], [
    { kind: "list-commands", id: "l" },
    { kind: "prompt", id: "r", command: "review", text: "src/a.ts \"error handling\"" },
    { kind: "prompt", id: "d", command: "deploy:check", text: "staging" },
    { kind: "prompt", id: "p", command: "plain", text: "loudly" },
    { kind: "prompt", id: "x", command: "nope", text: "" },
  ]);
  assert.equal(run.code, 0, run.stderr);
  const listed = run.response("l");
  assert.equal(listed.ok, true);
  assert.deepEqual(listed.data.map((c: Record<string, unknown>) => [c.name, c.source, c.description]), [
    ["deploy:check", "project", "Check before deploying"],
    ["plain", "project", "Say hello."],
    ["review", "claude", "Review a file"],
  ]);
  assert.equal(listed.data[2].argument_hint, "<file> <focus>");
  assert.deepEqual(listed.data[0].allowed_tools, ["read_file", "grep"]);

  for (const id of ["r", "d", "p"]) assert.equal(run.response(id).ok, true, id);
  const [review, check, plain] = server.requests.slice(-3).map((r) => r.body);
  const reviewText = lastUserText(review!);
  assert.match(reviewText, /^Review src\/a\.ts with a focus on error handling\. Everything: src\/a\.ts "error handling"\./);
  assert.match(reviewText, /Contents of notes\.txt:\n```\nNOTES-CONTENT/);
  assert.match(reviewText, /@\.env not included: Refused/);
  assert.doesNotMatch(reviewText, /do-not-send/);
  assert.ok(review!.tools.length > 2, "a command without allowed-tools keeps the session's tools");

  assert.equal(lastUserText(check!), "Check the deploy for staging.");
  assert.deepEqual(check!.tools.map((t: { name: string }) => t.name).sort(), ["grep", "read_file"]);
  // No placeholder: the arguments are appended, not dropped.
  assert.equal(lastUserText(plain!), "Say hello.\n\nARGUMENTS: loudly");

  const unknown = run.response("x");
  assert.deepEqual([unknown.ok, unknown.error_code], [false, "unknown_command"]);
  assert.match(unknown.error, /no custom command "nope"; commands: deploy:check, plain, review/);
  assert.equal(server.pending(), 0);
});

test("a command's allowed-tools never adds a tool the session does not have", async () => {
  const sb = makeSandbox(server.url);
  write(join(sb.workspace, ".keen", "commands", "wide.md"), "---\nallowed-tools: bash, write_file, read_file\n---\nDo it.\n");
  server.enqueue({ text: "Done." });
  const run = await runScript(sb.run, ["--model", MODEL, "--allowed-tools", "read_file,grep"], [{ kind: "prompt", id: "w", command: "wide", text: "" }]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.response("w").ok, true);
  assert.deepEqual(server.requests.at(-1)!.body.tools.map((t: { name: string }) => t.name), ["read_file"]);
});
