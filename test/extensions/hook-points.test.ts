import { test } from "node:test";
import assert from "node:assert/strict";
import type { EventDraft } from "../../protocol/events.js";
import type { PermissionDecision, PermissionRequest, PermissionRequester } from "../../app/permissions/requester.js";
import { createHookSet, type TurnHookContext } from "../../app/extensions/hook-points.js";
import type { HookEventName, HookSpec } from "../../app/extensions/hooks-config.js";
import { readAnswer, runHookCommand, type HookRun } from "../../app/extensions/hooks-run.js";
import { makeTempDir } from "../temp.js";

/* The answer contract (exit codes, JSON on stdout) and the hook points around a fake gate, with real `sh` hooks. */

const cwd = makeTempDir("keen-hook-points-");
const run = (command: string, timeoutMs = 30_000) => runHookCommand(command, { hook_event_name: "PreToolUse", tool_name: "Bash" }, { cwd, env: process.env, timeoutMs });
const ran = (outcome: HookRun["outcome"], stdout = "", stderr = ""): HookRun => ({ outcome, exitCode: 0, stdout, stderr, durationMs: 1 });

test("exit codes: 0 ok, 2 blocked with stderr as the reason, anything else an error that blocks nothing; stdin is the input JSON", async () => {
  const ok = await run(`cat`);
  assert.equal(ok.outcome, "ok");
  assert.deepEqual(JSON.parse(ok.stdout), { hook_event_name: "PreToolUse", tool_name: "Bash" });
  const blocked = await run(`echo "no rm here" >&2; exit 2`);
  assert.deepEqual([blocked.outcome, blocked.exitCode], ["blocked", 2]);
  assert.deepEqual(readAnswer("PreToolUse", blocked), { block: "no rm here" });
  const failed = await run(`echo broken >&2; exit 1`);
  assert.deepEqual([failed.outcome, failed.message], ["error", "exited with 1: broken"]);
  assert.deepEqual(readAnswer("PreToolUse", failed), {});
  const missing = await run(`/no/such/hook`);
  assert.equal(missing.outcome, "error");
  const ignoresStdin = await run(`exit 0`);
  assert.equal(ignoresStdin.outcome, "ok");
});

test("a hook past its timeout is killed with what it started", async () => {
  const slow = await run(`sleep 60 & sleep 60`, 300);
  assert.equal(slow.outcome, "timeout");
  assert.match(slow.message!, /killed after 0.3s/);
});

test("an interrupt kills a running hook: an error, not a block", async () => {
  const controller = new AbortController();
  const running = runHookCommand("sleep 60", {}, { cwd, env: process.env, timeoutMs: 60_000, signal: controller.signal });
  controller.abort();
  const ended = await running;
  assert.deepEqual([ended.outcome, ended.message], ["error", "interrupted"]);
});

test("JSON answers: permissionDecision, updatedInput, decision/reason, continue:false, additionalContext, plain stdout as context", () => {
  const json = (value: unknown) => ran("ok", JSON.stringify(value));
  assert.deepEqual(readAnswer("PreToolUse", json({ hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: "not on main" } })), { permission: "deny", reason: "not on main" });
  assert.deepEqual(readAnswer("PreToolUse", json({ hookSpecificOutput: { permissionDecision: "ask", updatedInput: { command: "ls" } } })), { permission: "ask", updatedInput: { command: "ls" } });
  assert.deepEqual(readAnswer("PreToolUse", json({ decision: "approve", reason: "fine" })), { permission: "allow", reason: "fine" }, "the old approve is allow");
  assert.deepEqual(readAnswer("PreToolUse", json({ decision: "block", reason: "old style" })), { permission: "deny", reason: "old style" });
  assert.deepEqual(readAnswer("Stop", json({ decision: "block", reason: "tests fail" })), { block: "tests fail", reason: "tests fail" });
  assert.deepEqual(readAnswer("PostToolUse", json({ continue: false, stopReason: "enough" })), { stop: "enough" });
  assert.deepEqual(readAnswer("PostToolUse", json({ hookSpecificOutput: { additionalContext: "lint: 2 warnings" } })), { context: "lint: 2 warnings" });
  assert.deepEqual(readAnswer("UserPromptSubmit", ran("ok", "branch: main\n")), { context: "branch: main" });
  assert.deepEqual(readAnswer("PreToolUse", ran("ok", "just talking\n")), {}, "plain stdout of other events is not for the model");
  assert.deepEqual(readAnswer("Stop", ran("timeout", '{"decision":"block"}')), {}, "a hook that timed out answers nothing");
});

/** A gate that records what it was asked and answers as told. */
function fakeGate(answer: (req: PermissionRequest) => PermissionDecision = () => ({ allow: true })) {
  const asked: PermissionRequest[] = [];
  const gate: PermissionRequester = {
    wantsPreview: () => false,
    async request(req) {
      asked.push(req);
      return answer(req);
    },
  };
  return { gate, asked };
}

function turn(hooks: Partial<Record<HookEventName, string[]>>, gate: PermissionRequester, matcher = "") {
  const specs: HookSpec[] = Object.entries(hooks).flatMap(([event, commands]) =>
    commands!.map((command) => ({ event: event as HookEventName, matcher, command, timeoutMs: 30_000, source: "user" as const, file: "config.json" })));
  const events: EventDraft[] = [];
  const context: TurnHookContext = {
    sessionId: "s1", cwd, model: "p/m", mode: () => "ask", emit: async (e) => void events.push(e), gate, interactive: false,
  };
  return { hooks: createHookSet(specs, { workspace: cwd, env: process.env })!.forTurn(context), events };
}

const answerWith = (value: unknown) => `cat > /dev/null; echo '${JSON.stringify(value)}'`;
const req = (input: unknown): PermissionRequest => ({ tool: "bash", kind: "exec", input, summary: "bash", callId: "c1" });

test("PreToolUse: deny refuses without asking the gate; allow and ask reach the gate as its hook say; a rewrite is the call's input", async () => {
  const denied = fakeGate();
  const deny = turn({ PreToolUse: [answerWith({ hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: "no" } })] }, denied.gate);
  assert.deepEqual(await deny.hooks.requester.request(req({ command: "rm -rf x" })), { allow: false, reason: "Not executed: a PreToolUse hook blocked this call: no" });
  assert.equal(denied.asked.length, 0);
  assert.deepEqual(deny.events.map((e) => e.kind === "hook" && [e.outcome, e.decision, e.tool_name, e.tool_call_id]), [["blocked", "deny", "bash", "c1"]]);

  const asking = fakeGate();
  const ask = turn({ PreToolUse: [answerWith({ hookSpecificOutput: { permissionDecision: "ask", updatedInput: { command: "ls -la" } } })] }, asking.gate);
  const decision = await ask.hooks.requester.request({ ...req({ command: "ls" }), describe: async (input) => ({ summary: `bash: ${(input as { command: string }).command}` }) });
  assert.deepEqual(decision, { allow: true, input: { command: "ls -la" } });
  assert.deepEqual([asking.asked[0]!.hook, asking.asked[0]!.input, asking.asked[0]!.summary], ["ask", { command: "ls -la" }, "bash: ls -la"]);

  // deny wins over allow when several hooks answer; a gate's refusal stands over a hook's allow.
  const refusing = fakeGate(() => ({ allow: false, reason: "read-only" }));
  const both = turn({ PreToolUse: [answerWith({ hookSpecificOutput: { permissionDecision: "allow" } }), `cat > /dev/null; echo nope >&2; exit 2`] }, refusing.gate);
  assert.deepEqual(await both.hooks.requester.request(req({ command: "x" })), { allow: false, reason: "Not executed: a PreToolUse hook blocked this call: nope" });
  const allow = turn({ PreToolUse: [answerWith({ hookSpecificOutput: { permissionDecision: "allow" } })] }, refusing.gate);
  assert.deepEqual(await allow.hooks.requester.request(req({ command: "x" })), { allow: false, reason: "read-only" });
  assert.equal(refusing.asked[0]!.hook, "allow");
});

test("PreToolUse sees Claude Code's names and an absolute file_path; a rewritten file_path becomes Keen's path", async () => {
  const { gate } = fakeGate();
  const { hooks } = turn({ PreToolUse: [`cat > "${cwd}/seen.json"; echo '{"hookSpecificOutput":{"updatedInput":{"path":"a.txt","file_path":"/tmp/b.txt","content":"x"}}}'`] }, gate, "Write");
  const decision = await hooks.requester.request({ tool: "write_file", kind: "edit", input: { path: "a.txt", content: "x" }, summary: "w" });
  assert.deepEqual(decision, { allow: true, input: { path: "/tmp/b.txt", content: "x" } });
  const seen = JSON.parse((await import("node:fs")).readFileSync(`${cwd}/seen.json`, "utf8"));
  assert.deepEqual([seen.tool_name, seen.keen_tool_name, seen.tool_input], ["Write", "write_file", { path: "a.txt", content: "x", file_path: `${cwd}/a.txt` }]);
});

test("PostToolUse adds a blocking reason and context to the result; a failing hook leaves it as it was", async () => {
  const { gate } = fakeGate();
  const { hooks, events } = turn({ PostToolUse: [`cat > /dev/null; echo "lint failed" >&2; exit 2`, answerWith({ hookSpecificOutput: { additionalContext: "formatted" } }), "exit 7"] }, gate);
  const result = await hooks.requester.afterTool!({ tool: "edit_file", callId: "c2", input: {} }, { content: "edited", is_error: false });
  assert.deepEqual(result, { content: "edited\n\nA PostToolUse hook says: lint failed\n\nformatted", is_error: false });
  assert.deepEqual(events.map((e) => e.kind === "hook" && e.outcome), ["blocked", "ok", "error"]);
});

test("Stop keeps the turn going with the hook's reason, with stop_hook_active set on the next answer; UserPromptSubmit blocks or adds context", async () => {
  const { gate } = fakeGate();
  const stop = turn({ Stop: [`input=$(cat); case "$input" in *'"stop_hook_active":false'*) echo "run the tests" >&2; exit 2;; esac`] }, gate);
  const [policy] = stop.hooks.policies;
  assert.match((await policy!.onAnswer!("done"))!, /Stop hook asks you to continue before ending the turn: run the tests/);
  assert.equal(await policy!.onAnswer!("done again"), undefined);

  const blocked = turn({ UserPromptSubmit: [`grep -q password && { echo "no secrets in prompts" >&2; exit 2; }; exit 0`] }, gate);
  const before = await blocked.hooks.beforeTurn("my password is hunter2");
  assert.equal(before.blocked, "a UserPromptSubmit hook blocked the prompt: no secrets in prompts");
  assert.deepEqual(blocked.events.at(-1), { kind: "error", message: before.blocked, error_code: "hook_blocked" });
  const context = turn({ UserPromptSubmit: ["cat > /dev/null; echo 'on branch main'"], SessionStart: ["cat > /dev/null; echo 'fresh checkout'"] }, gate);
  const added = await context.hooks.beforeTurn("hi", "startup");
  assert.deepEqual(added, { context: [
    { type: "text", text: "SessionStart hook context:\nfresh checkout", context: true }, { type: "text", text: "UserPromptSubmit hook context:\non branch main", context: true },
  ] });
  assert.deepEqual((await context.hooks.beforeTurn("again")).context.map((b) => b.type === "text" && b.text), ["UserPromptSubmit hook context:\non branch main"], "SessionStart only on the session's first turn");
});

test("PreCompact runs when a compaction starts (overflow counts as auto), after the event; Notification's idle_prompt only for interactive turns", async () => {
  const { gate } = fakeGate();
  const { hooks, events } = turn({ PreCompact: [`cat > "${cwd}/compact.json"`], Notification: [`cat > "${cwd}/notified.json"`] }, gate);
  await hooks.emit({ kind: "compaction", phase: "start", trigger: "overflow", tokens_before: 10 });
  assert.deepEqual(events.map((e) => e.kind === "hook" ? `hook:${e.hook_event}` : e.kind), ["compaction", "hook:PreCompact"]);
  const input = JSON.parse((await import("node:fs")).readFileSync(`${cwd}/compact.json`, "utf8"));
  assert.deepEqual([input.hook_event_name, input.trigger, input.custom_instructions], ["PreCompact", "auto", ""]);
  await hooks.emit({ kind: "turn-end", turn_id: "t", status: "success", steps: 1 });
  assert.equal(events.filter((e) => e.kind === "hook").length, 1, "keen run (not interactive): nobody waits, no idle notification");
});
