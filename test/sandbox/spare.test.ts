import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { sandboxSupport } from "../../app/sandbox/deps.js";
import { sandboxPolicy } from "../../app/sandbox/policy.js";
import { createCommandSandbox, disposeSandbox, type SpawnedCommand } from "../../app/sandbox/runtime.js";
import { makeTempDir } from "../temp.js";

/*
 * The spare (app/sandbox/spare.ts): after a sandboxed bash call starts, the next call's sandbox is
 * started ahead and waits for its command. These check that the next call runs in it, that one made
 * before the policy changed is never used, and that none outlives its session.
 */

const skip = sandboxSupport().ok ? false : "no sandbox on this machine";
// The library's proxies would keep this process alive.
after(() => disposeSandbox());

function setup() {
  const root = realpathSync(makeTempDir("keen-spare-"));
  const home = join(root, "home");
  const workspace = join(root, "ws");
  for (const dir of [home, workspace, join(root, "tmp")]) mkdirSync(dir);
  const spares: number[] = [];
  let waiting: (pid: number) => void = () => {};
  const sandbox = createCommandSandbox(sandboxPolicy({ workspace, tmpDir: join(root, "tmp"), guard: { home, protectedPaths: [] } }), {
    onSpare: (pid) => (spares.push(pid), waiting(pid)),
  });
  const place = { cwd: workspace, env: { PATH: process.env.PATH, HOME: home } };
  /** The next spare's pid, once it waits. */
  const nextSpare = (count: number) => new Promise<number>((resolve) => {
    if (spares.length >= count) return resolve(spares[count - 1]!);
    waiting = (pid) => spares.length >= count && resolve(pid);
  });
  return { workspace, home, sandbox, place, nextSpare };
}

/** Two calls (a session's first starts no spare, its second does); the pid of the spare waiting after them. */
async function primed(sandbox: ReturnType<typeof setup>["sandbox"], place: ReturnType<typeof setup>["place"], nextSpare: (count: number) => Promise<number>): Promise<number> {
  await finish(await sandbox.spawn("exec 2>&1; true", undefined, place));
  await finish(await sandbox.spawn("exec 2>&1; true", undefined, place));
  return nextSpare(1);
}

/** Runs a spawned command to its end, as bash.ts does; its output (and the sandbox's report). */
async function finish(spawned: SpawnedCommand, onStart?: (pid: number) => void): Promise<string> {
  let out = "";
  spawned.child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  spawned.child.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const closed = new Promise((resolve) => spawned.child.on("close", resolve));
  spawned.begin();
  onStart?.(spawned.child.pid!);
  await closed;
  return out + (spawned.finish() ?? "");
}

const alive = (pid: number) => {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
};

test("the call after a sandboxed call runs in the sandbox started ahead for it, and is confined as the first", { skip }, async () => {
  const { sandbox, place, nextSpare, workspace } = setup();
  assert.equal(await finish(await sandbox.spawn("exec 2>&1; echo first", undefined, place)), "first\n");
  // A session's first call starts no spare (a one-shot run would not use it); its second does.
  assert.equal(await finish(await sandbox.spawn("exec 2>&1; echo zeroth", undefined, place)), "zeroth\n");
  const ahead = await nextSpare(1);
  const second = await sandbox.spawn("exec 2>&1; echo second > out.txt; cat out.txt; touch /outside.txt", undefined, place);
  assert.equal(second.child.pid, ahead, "the second call runs in the spare");
  const out = await finish(second);
  assert.match(out, /^second\n[\s\S]*Read-only file system/, out);
  assert.equal(readFileSync(join(workspace, "out.txt"), "utf8"), "second\n");
  // Its stdin is /dev/null, as the bash tool promises: `cat` gets EOF at once.
  await nextSpare(2);
  assert.equal(await finish(await sandbox.spawn("exec 2>&1; cat; echo done", undefined, place)), "done\n");
  sandbox.close();
});

test("a secret that appears after the spare was started is unreadable: that spare is ended unused", { skip }, async () => {
  const { sandbox, place, nextSpare, workspace, home } = setup();
  const ahead = await primed(sandbox, place, nextSpare);
  writeFileSync(join(workspace, ".env"), "TOKEN=SECRET-IN-ENV");
  mkdirSync(join(home, ".aws"));
  writeFileSync(join(home, ".aws", "credentials"), "AWS-SECRET");
  const next = await sandbox.spawn(`exec 2>&1; cat .env ${join(home, ".aws", "credentials")}; echo ran`, undefined, place);
  assert.notEqual(next.child.pid, ahead, "a fresh sandbox, not the spare");
  const out = await finish(next);
  assert.doesNotMatch(out, /SECRET/, out);
  assert.match(out, /ran/);
  for (let until = Date.now() + 10_000; alive(ahead) && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
  assert.ok(!alive(ahead), "the unfit spare is gone");
  sandbox.close();
});

test("a command in a spare stops as any sandboxed command does: its TERM handler runs", { skip }, async () => {
  const { sandbox, place, nextSpare } = setup();
  const ahead = await primed(sandbox, place, nextSpare);
  // "started" once the sleep exists, so the stop finds it (a sleep forked after the stop's look would hold the pipes for 30 s).
  const long = await sandbox.spawn("exec 2>&1; trap 'echo got TERM; exit 3' TERM; sleep 30 & echo started; wait", undefined, place);
  assert.equal(long.child.pid, ahead);
  let started!: () => void;
  const running = new Promise<void>((resolve) => (started = resolve));
  long.child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("started") && started());
  const out = finish(long);
  await running;
  assert.ok(long.terminate(ahead), "there were processes inside to signal");
  assert.match(await out, /started\n[\s\S]*got TERM/);
  sandbox.close();
});

test("a spare that ended while it waited (killed, failed) is not given the command: the call starts its own", { skip }, async () => {
  const { sandbox, place, nextSpare } = setup();
  const ahead = await primed(sandbox, place, nextSpare);
  process.kill(-ahead, "SIGKILL");
  // Until it is reaped (gone from /proc, not a zombie): Keen has seen its exit by then.
  for (let until = Date.now() + 10_000; existsSync(`/proc/${ahead}`) && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
  const next = await sandbox.spawn("exec 2>&1; echo fresh", undefined, place);
  assert.notEqual(next.child.pid, ahead);
  assert.equal(await finish(next), "fresh\n");
  sandbox.close();
});

test("close ends the spare still waiting, with everything it started", { skip }, async () => {
  const { sandbox, place, nextSpare } = setup();
  const ahead = await primed(sandbox, place, nextSpare);
  assert.ok(alive(ahead));
  sandbox.close();
  for (let until = Date.now() + 10_000; alive(ahead) && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
  assert.ok(!alive(ahead), "no spare outlives its session");
});
