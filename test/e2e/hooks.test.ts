import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { listing, makeSandbox } from "./harness.js";
import { sandbox as cliSandbox } from "./cli-runner-sandbox.js";
import { startStdio } from "./stdio-client.js";

/*
 * Hooks (docs/extensions.md "Hooks") through bin/keen and the scripted mock model: hook
 * scripts written for Claude Code (stdin JSON, exit codes, JSON answers) in user config and,
 * behind `keen trust`, in the repository. Each workspace is a git repository with the
 * sandbox at its default; what a hook leaves goes outside the workspace.
 */
const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();

/** A Claude Code PreToolUse guard in plain node: reads the call from stdin and blocks `rm` with exit 2. */
const GUARD = `
let data = "";
process.stdin.on("data", (d) => (data += d)).on("end", () => {
  const input = JSON.parse(data);
  require("fs").appendFileSync(process.argv[2], JSON.stringify(input) + "\\n");
  if (input.tool_name === "Bash" && /\\brm\\b/.test(input.tool_input.command)) {
    process.stderr.write("rm is not allowed here; move files to trash/ instead");
    process.exit(2);
  }
});
`;

function sandbox(config: Record<string, unknown> = {}) {
  const sb = makeSandbox(server.url, config);
  execFileSync("git", ["init", "-q"], { cwd: sb.workspace });
  return sb;
}

/** The tool results of a provider request, by call id. */
function toolResults(body: Record<string, any>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const message of body.messages) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block.type !== "tool_result") continue;
      out[block.tool_use_id] = typeof block.content === "string" ? block.content : block.content.map((c: { text?: string }) => c.text ?? "").join("");
    }
  }
  return out;
}

const lines = (stdout: string) => stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, any>);

test("a PreToolUse hook written for Claude Code blocks a bash call with exit 2, and its reason reaches the model", async () => {
  const sb = sandbox();
  const script = join(sb.root, "guard.js");
  const seen = join(sb.root, "seen.jsonl");
  writeFileSync(script, GUARD);
  writeFileSync(join(sb.home, "config.json"), JSON.stringify({
    stdinGraceMs: 300, retry: { baseDelayMs: 10 },
    hooks: { PreToolUse: [{ matcher: "Bash|Edit", hooks: [{ type: "command", command: `node ${script} ${seen}`, timeout: 30 }] }] },
  }));
  writeFileSync(join(sb.workspace, "keep.txt"), "precious\n");
  server.enqueue(
    { toolCalls: [{ id: "toolu_rm", name: "bash", input: { command: "rm keep.txt" } }] },
    { text: "I will not delete it." },
  );
  const r = await sb.run(["run", "--model", MODEL, "--no-stdin", "--headless", "delete keep.txt"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(readFileSync(join(sb.workspace, "keep.txt"), "utf8"), "precious\n", "the call never ran");
  const sent = toolResults(server.requests.at(-1)!.body);
  assert.match(sent.toolu_rm!, /PreToolUse hook blocked this call: rm is not allowed here; move files to trash\/ instead/);

  // The hook got Claude Code's fields on stdin.
  const input = JSON.parse(readFileSync(seen, "utf8").trim());
  assert.equal(input.hook_event_name, "PreToolUse");
  assert.equal(input.tool_name, "Bash");
  assert.equal(input.keen_tool_name, "bash");
  assert.deepEqual(input.tool_input, { command: "rm keep.txt" });
  assert.equal(input.tool_use_id, "toolu_rm");
  assert.equal(input.cwd, sb.workspace);
  assert.equal(input.permission_mode, "bypassPermissions");
  assert.equal(typeof input.session_id, "string");

  // The hook event is on stdout and in the store, with the command, outcome and decision.
  const hook = lines(r.stdout).find((l) => l.kind === "hook")!;
  assert.deepEqual(
    { ...hook, conversation_id: undefined, ts: undefined, seq: undefined, duration_ms: typeof hook.duration_ms },
    {
      kind: "hook", conversation_id: undefined, ts: undefined, seq: undefined, hook_event: "PreToolUse", matcher: "Bash|Edit",
      command: `node ${script} ${seen}`, source: "user", outcome: "blocked", decision: "block", duration_ms: "number", exit_code: 2,
      tool_name: "bash", tool_call_id: "toolu_rm", message: "rm is not allowed here; move files to trash/ instead",
    },
  );
  const [session] = await sb.sessions();
  const stored = (await sb.show(session!.id)).events.filter((e) => e.kind === "hook");
  assert.deepEqual(stored.map((e) => [e.hook_event, e.outcome, e.decision]), [["PreToolUse", "blocked", "block"]]);
  // How `keen sessions show` prints it: test/cli/sessions-show-hooks.test.ts, in process.
});

test("a PreToolUse hook rewrites a call's input; a hook past its timeout is killed and reported, and the turn goes on", async () => {
  const sb = sandbox();
  const rewrite = join(sb.root, "rewrite.sh");
  writeFileSync(rewrite, [
    "#!/bin/sh", "cat > /dev/null",
    `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"echo rewritten-by-hook"}}}'`, "",
  ].join("\n"));
  writeFileSync(join(sb.home, "config.json"), JSON.stringify({
    stdinGraceMs: 300, retry: { baseDelayMs: 10 },
    hooks: {
      PreToolUse: [
        { matcher: "bash", hooks: [{ type: "command", command: `sh ${rewrite}` }] },
        { hooks: [{ type: "command", command: "sleep 60", timeout: 1 }] },
      ],
    },
  }));
  server.enqueue(
    { toolCalls: [{ id: "toolu_1", name: "bash", input: { command: "echo original" } }] },
    { text: "Done." },
  );
  const r = await sb.run(["run", "--model", MODEL, "--no-stdin", "--headless", "say something"]);
  assert.equal(r.code, 0, r.stderr);
  const out = lines(r.stdout);
  const result = out.find((l) => l.kind === "tool-result")!;
  assert.match(result.result, /rewritten-by-hook/);
  assert.doesNotMatch(result.result, /original/);
  assert.match(toolResults(server.requests.at(-1)!.body).toolu_1!, /rewritten-by-hook/);
  const hooks = out.filter((l) => l.kind === "hook");
  const byCommand = Object.fromEntries(hooks.map((h) => [h.command, h]));
  assert.deepEqual([byCommand[`sh ${rewrite}`].outcome, byCommand[`sh ${rewrite}`].decision, byCommand[`sh ${rewrite}`].updated_input], ["ok", "allow", true]);
  assert.equal(byCommand["sleep 60"].outcome, "timeout");
  assert.match(byCommand["sleep 60"].message, /killed after 1s/);
  assert.equal(out.at(-1)!.kind, "result");
  assert.equal(out.at(-1)!.status, "success");
});

test("an untrusted project hook does not run headless (stderr says so); after keen trust it runs; a change to its script revokes the trust", async () => {
  const sb = sandbox();
  const marker = join(sb.root, "ran.log");
  mkdirSync(join(sb.workspace, ".claude", "hooks"), { recursive: true });
  const hookScript = join(sb.workspace, ".claude", "hooks", "log.sh");
  writeFileSync(hookScript, `#!/bin/sh\ncat > /dev/null\necho ran >> ${marker}\n`);
  writeFileSync(join(sb.workspace, ".claude", "settings.json"), JSON.stringify({
    permissions: { allow: ["Bash(ls:*)"] },
    hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: 'sh "$CLAUDE_PROJECT_DIR"/.claude/hooks/log.sh' }] }] },
  }));
  const turn = () => {
    server.enqueue({ toolCalls: [{ name: "bash", input: { command: "echo hi" } }] }, { text: "ok" });
    return sb.run(["run", "--model", MODEL, "--no-stdin", "--headless", "go"]);
  };

  const untrusted = await turn();
  assert.equal(untrusted.code, 0, untrusted.stderr);
  assert.equal(existsSync(marker), false, "the untrusted hook never ran");
  assert.match(untrusted.stderr, /1 project hook \(\.claude\/settings\.json\) not run: this workspace's hooks are not trusted; review them, then run `keen trust`/);
  assert.equal(untrusted.stderr.match(/not trusted/g)!.length, 1, "said once");
  assert.equal(lines(untrusted.stdout).filter((l) => l.kind === "hook").length, 0);

  // keen trust through main() in this process (a Keen start less): what is trusted is Keen's decision; the runs stay real.
  const trust = await sb.main(["trust"]);
  assert.equal(trust.code, 0, trust.stderr);
  assert.match(trust.stdout, /Trusted the hooks of .*\n {2}PreToolUse \[Bash\]: sh "\$CLAUDE_PROJECT_DIR"\/\.claude\/hooks\/log\.sh {2}\(\.claude\/settings\.json\)/);
  const trusted = await turn();
  assert.equal(trusted.code, 0, trusted.stderr);
  assert.equal(readFileSync(marker, "utf8"), "ran\n");
  assert.doesNotMatch(trusted.stderr, /not trusted/);
  assert.deepEqual(lines(trusted.stdout).filter((l) => l.kind === "hook").map((h) => [h.source, h.outcome]), [["project", "ok"]]);

  // The script the hook names is part of what was trusted.
  writeFileSync(hookScript, `#!/bin/sh\ncat > /dev/null\necho changed >> ${marker}\n`);
  const changed = await turn();
  assert.equal(changed.code, 0, changed.stderr);
  assert.equal(readFileSync(marker, "utf8"), "ran\n", "the changed hook did not run");
  assert.match(changed.stderr, /not trusted/);
  // `keen untrust` and `keen trust` with nothing to trust: test/cli/hooks-trust.test.ts, in process.
});

test("over keen stdio: SessionStart adds context, a permission ask and the turn's end notify, Stop keeps the turn going once, UserPromptSubmit blocks a prompt", async () => {
  const sb = sandbox();
  const notified = join(sb.root, "notified.log");
  const hook = (command: string) => [{ hooks: [{ type: "command", command }] }];
  writeFileSync(join(sb.home, "config.json"), JSON.stringify({
    stdinGraceMs: 300, retry: { baseDelayMs: 10 },
    hooks: {
      SessionStart: hook("cat > /dev/null; echo SESSION-CONTEXT"),
      UserPromptSubmit: hook(`case "$(cat)" in *forbidden*) echo "no forbidden words" >&2; exit 2;; esac`),
      Stop: hook(`case "$(cat)" in *'"stop_hook_active":false'*) echo "run the tests first" >&2; exit 2;; esac`),
      Notification: hook(`node -e 'let d="";process.stdin.on("data",c=>d+=c).on("end",()=>require("fs").appendFileSync(process.argv[1],JSON.parse(d).notification_type+"\\n"))' ${notified}`),
    },
  }));
  const before = listing(sb.workspace);
  server.enqueue(
    { toolCalls: [{ id: "toolu_ls", name: "bash", input: { command: "echo hi" } }] },
    { text: "Done." },
    { text: "Tests pass. Done." },
  );
  const requests = server.requests.length;
  const client = startStdio(["--model", MODEL, "--permission-mode", "ask"], sb.env, sb.workspace, 120_000);
  client.send({ kind: "prompt", id: "p1", text: "hello" });
  const ask = await client.next((l) => l.kind === "permission-request");
  client.send({ kind: "permission-response", id: "a1", request_id: ask.request_id, decision: "allow-once" });
  assert.equal((await client.response("p1")).data.status, "success");
  client.send({ kind: "prompt", id: "p2", text: "a forbidden wish" });
  const blocked = await client.response("p2");
  assert.equal(blocked.data.status, "error");
  const { code } = await client.end();
  assert.equal(code, 0);

  const sent = server.requests.slice(requests).map((r) => r.body);
  assert.equal(sent.length, 3, "the blocked prompt never reached the model");
  assert.match(JSON.stringify(sent[0]!.messages[0]), /SessionStart hook context:\\nSESSION-CONTEXT/);
  assert.match(JSON.stringify(sent[2]!.messages.at(-1)), /A Stop hook asks you to continue before ending the turn: run the tests first/);
  assert.deepEqual(readFileSync(notified, "utf8").trim().split("\n"), ["permission_prompt", "idle_prompt"]);

  const hooks = client.lines.filter((l) => l.kind === "hook").map((h) => `${h.hook_event}:${h.outcome}`);
  assert.deepEqual(hooks, [
    "SessionStart:ok", "UserPromptSubmit:ok", "Notification:ok", "Stop:blocked", "Stop:ok", "Notification:ok", "UserPromptSubmit:blocked",
  ]);
  const error = client.lines.find((l) => l.kind === "error")!;
  assert.deepEqual([error.error_code, error.message], ["hook_blocked", "a UserPromptSubmit hook blocked the prompt: no forbidden words"]);
  const userTexts = client.lines.filter((l) => l.kind === "text" && l.role === "user").map((l) => l.content);
  assert.deepEqual(userTexts, ["hello"], "the text event shows what the user typed, not the hooks' context; the blocked prompt is not in it");
  assert.deepEqual(listing(sb.workspace), before);
});

test("the CLI runner's relayed ask passes PreToolUse: a hook matching Keen's name allows it in a one-shot run and rewrites what the CLI runs", async () => {
  const box = cliSandbox("tool-bash");
  const config = JSON.parse(readFileSync(join(box.home, "config.json"), "utf8"));
  const answer = { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: { command: "echo rewritten" } } };
  config.hooks = { PreToolUse: [{ matcher: "bash", hooks: [{ type: "command", command: `cat > /dev/null; echo '${JSON.stringify(answer)}'` }] }] };
  writeFileSync(join(box.home, "config.json"), JSON.stringify(config));
  const r = await box.run(["run", "--runner", "cli", "--permission-mode", "accept-edits", "--headless", "run echo hi"]);
  assert.equal(r.code, 0, r.stderr);
  // Without the hook a one-shot run has nobody to ask and the CLI is told no (cli-runner-frontends.test.ts).
  assert.deepEqual(box.runs()[0]!.asks, [{ behavior: "allow", updatedInput: { command: "echo rewritten" } }]);
  const hook = lines(r.stdout).find((l) => l.kind === "hook")!;
  assert.deepEqual([hook.hook_event, hook.tool_name, hook.decision, hook.updated_input], ["PreToolUse", "Bash", "allow", true]);
});
