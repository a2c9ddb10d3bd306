import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { test } from "node:test";
import { BASH_OUTPUT_CAP, createBashTool } from "../../app/tools/bash.js";
import { killAllGroups } from "../../app/tools/process-groups.js";
import { toolEnv } from "../../app/tools/index.js";
import { call, tempWorkspace } from "./helpers.js";

const t = tempWorkspace();
t.write({ "sub/marker.txt": "here\n" });
const bash = createBashTool(t.ctx());

/** Alive means running: gone, or a zombie waiting for a reaper (PID 1 in a container may never reap), is dead. */
function alive(pid: number): boolean {
  if (existsSync("/proc")) {
    try {
      return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitDead(pids: number[]): Promise<number[]> {
  for (let i = 0; i < 50 && pids.some(alive); i++) await sleep(100);
  return pids.filter(alive);
}

const pidsIn = (file: string) => readFileSync(file, "utf8").trim().split(/\s+/).map(Number);

test("runs in cwd and interleaves stdout and stderr", async () => {
  const r = await bash.run({ command: "pwd; echo out; echo err >&2; ls sub" }, call());
  assert.equal(r.is_error, false);
  assert.equal(r.content, `${t.ws}\nout\nerr\nmarker.txt\n`);
  assert.equal(r.details?.exit_code, 0);
  assert.equal(r.details?.command, "pwd; echo out; echo err >&2; ls sub");
  assert.equal(r.details?.truncated, false);
  assert.equal(typeof r.details?.duration_ms, "number");
  // For UIs: the lines the command printed; no note when it succeeded.
  assert.equal(r.details?.output_lines, 4);
  assert.equal(r.details?.note, undefined);
  assert.equal((await bash.run({ command: "true" }, call())).details?.output_lines, 0);
});

test("cwd follows ctx.cwd and state does not persist between calls", async () => {
  const inSub = createBashTool(t.ctx("sub"));
  assert.equal((await inSub.run({ command: "cat marker.txt" }, call())).content, "here\n");
  await bash.run({ command: "cd sub; export KEEN_X=1" }, call());
  assert.equal((await bash.run({ command: "pwd; echo ${KEEN_X:-unset}" }, call())).content, `${t.ws}\nunset\n`);
});

test("a non-zero exit is an error that names the exit code", async () => {
  const r = await bash.run({ command: "echo failing; exit 3" }, call());
  assert.equal(r.is_error, true);
  assert.equal(r.content, "failing\n\n\n[exit code 3]");
  assert.equal(r.details?.exit_code, 3);
  // Keen's note apart from the command's one line, so a UI counts what the command printed.
  assert.equal(r.details?.output_lines, 1);
  assert.equal(r.details?.note, "exit code 3");
});

test("a syntax error, printed before the command runs, still reaches the model", async () => {
  const r = await bash.run({ command: "if" }, call());
  assert.equal(r.is_error, true);
  assert.match(r.content, /syntax error[\s\S]*\[exit code 2\]$/);
});

test("no output says so", async () => {
  assert.equal((await bash.run({ command: "true" }, call())).content, "(no output)");
});

test("stdin is /dev/null: cat gets EOF at once", async () => {
  const r = await bash.run({ command: "cat; echo done; readlink /proc/self/fd/0 2>/dev/null || true" }, call());
  assert.equal(r.is_error, false);
  assert.match(r.content, /^done\n(\/dev\/null\n)?$/);
});

test("env is ctx.env: provider keys stripped by toolEnv never reach the command", async () => {
  const env = toolEnv({ PATH: process.env.PATH, ANTHROPIC_API_KEY: "sk-ant", OPENAI_API_KEY: "sk-oa", MY_SERVICE_API_KEY: "k", KEEN_TOKEN: "t", KEEN_MODEL: "m" });
  const r = await createBashTool(t.ctx(".", env)).run({ command: "env" }, call());
  assert.doesNotMatch(r.content, /API_KEY|KEEN_TOKEN|sk-/);
  assert.match(r.content, /^KEEN_MODEL=m$/m);
});

test("timeout kills the whole process group", async () => {
  const pidFile = join(t.ws, "timeout-pids");
  const command = `sleep 100 & echo $! > ${pidFile}; sleep 100 & echo $! >> ${pidFile}; echo started; wait`;
  const r = await bash.run({ command, timeout_ms: 500 }, call());
  assert.equal(r.is_error, true);
  assert.equal(r.content, "started\n\n\n[timed out after 0.5s; the command and its child processes were killed]");
  const pids = pidsIn(pidFile);
  assert.equal(pids.length, 2);
  assert.deepEqual(await waitDead(pids), []);
});

test("a process that ignores SIGTERM is killed after the grace period", async () => {
  const r = await bash.run({ command: "trap '' TERM; echo stubborn; while true; do sleep 0.1; done", timeout_ms: 300 }, call());
  assert.equal(r.is_error, true);
  assert.match(r.content, /timed out after 0.3s/);
});

test("abort via the call signal kills the group", async () => {
  const pidFile = join(t.ws, "abort-pids");
  const controller = new AbortController();
  let started!: () => void;
  const ready = new Promise<void>((r) => (started = r));
  const running = bash.run({ command: `sleep 100 & echo $! > ${pidFile}; echo started; wait` }, { signal: controller.signal, onOutput: () => started() });
  await ready;
  controller.abort();
  const r = await running;
  assert.equal(r.is_error, true);
  assert.match(r.content, /\[aborted; the command and its child processes were killed\]$/);
  assert.deepEqual(await waitDead(pidsIn(pidFile)), []);
});

test("already aborted: nothing runs", async () => {
  const controller = new AbortController();
  controller.abort();
  const r = await bash.run({ command: `touch ${join(t.ws, "should-not-exist")}` }, { signal: controller.signal });
  assert.equal(r.is_error, true);
  assert.equal(existsSync(join(t.ws, "should-not-exist")), false);
});

test("background jobs die when the command finishes, and do not hold the call open", async () => {
  const r = await bash.run({ command: "sleep 100 & echo $!" }, call());
  assert.equal(r.is_error, false);
  assert.deepEqual(await waitDead([Number(r.content.trim())]), []);
});

test("output is capped: head and tail kept, the cut counted in bytes", async () => {
  const r = await bash.run({ command: "seq 1 20000" }, call());
  const full = Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join("");
  const half = BASH_OUTPUT_CAP / 2;
  const cut = full.length - BASH_OUTPUT_CAP;
  assert.equal(r.is_error, false);
  assert.equal(r.details?.truncated, true);
  assert.ok(r.content.startsWith(full.slice(0, half)));
  assert.ok(r.content.endsWith(full.slice(-half)));
  assert.ok(r.content.includes(`[... ${cut} bytes of output cut from the middle;`));
  assert.ok(r.content.length < BASH_OUTPUT_CAP + 200);
});

test("every chunk is streamed to onOutput", async () => {
  const chunks: string[] = [];
  const r = await bash.run({ command: "echo one; sleep 0.05; echo two >&2" }, call({ onOutput: (c) => chunks.push(c) }));
  assert.equal(chunks.join(""), "one\ntwo\n");
  assert.equal(r.content, "one\ntwo\n");
});

test("invalid input is an error result, not a throw", async () => {
  const r = await bash.run({ cmd: "ls" }, call());
  assert.equal(r.is_error, true);
  assert.match(r.content, /^Invalid input for bash:\n.*expected string/s);
  assert.equal((await bash.run({ command: "ls", timeout_ms: 700_000 }, call())).is_error, true);
});

test("killAllGroups ends calls in flight", async () => {
  let started!: () => void;
  const ready = new Promise<void>((r) => (started = r));
  const running = bash.run({ command: "echo started; sleep 100" }, call({ onOutput: () => started() }));
  await ready;
  killAllGroups();
  const r = await running;
  assert.equal(r.is_error, true);
  assert.match(r.content, /killed by signal SIGKILL/);
});

// In this process, not a child Node: the hook is Node's "exit" listener, so what is ours to show is that a
// call in flight registered it and that it ends the whole group, a backgrounded child included.
test("process exit kills live groups (the exit hook)", async () => {
  const pidFile = join(t.ws, "exit-pids");
  let started!: () => void;
  const ready = new Promise<void>((r) => (started = r));
  const running = bash.run({ command: `sleep 100 & echo $! > ${pidFile}; echo started; sleep 100` }, call({ onOutput: () => started() }));
  await ready;
  const hooks = process.listeners("exit");
  assert.ok(hooks.includes(killAllGroups), "a running call installed the exit hook");
  for (const hook of hooks.filter((h) => h === killAllGroups)) hook.call(process, 0);
  assert.deepEqual(await waitDead(pidsIn(pidFile)), []);
  assert.match((await running).content, /killed by signal SIGKILL/);
});
