/**
 * The store keeps a session's database open between operations that come close
 * together (storage/level-db.ts): the reuse shows in LevelDB's open count, the
 * handle closes by itself, a failure leaves it closed, and nothing stored is
 * lost to `kill -9` or an exit while it is open.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";
import { Level } from "level";
import type { KeenEvent } from "../../protocol/events.js";
import { newSessionId } from "../../storage/ids.js";
import { closeDatabases, dbCounters } from "../../storage/level-db.js";
import { openStore } from "../../storage/level-store.js";
import { StoreError } from "../../storage/store.js";
import { makeTempDir } from "../temp.js";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const root = makeTempDir("keen-keep-open-");
after(() => rmSync(root, { recursive: true, force: true }));
// Bundled (esbuild, milliseconds) and run by plain node, as test/e2e/store-multi-process.test.ts does.
const childScript = join(root, "keep-open-child.cjs");
buildSync({
  entryPoints: [join(here, "keep-open-child.ts")], outfile: childScript,
  bundle: true, platform: "node", format: "cjs", target: "node20", packages: "external", logLevel: "error",
});
let dirs = 0;
const freshDir = () => join(root, `d${dirs++}`);

function textEvent(id: string, content: string): KeenEvent {
  return { kind: "text", conversation_id: id, ts: 0, role: "assistant", content };
}
const contents = (events: KeenEvent[]) => events.map((e) => (e as { content: string }).content);
const opens = (path: string) => dbCounters.opens.get(path) ?? 0;
const closes = (path: string) => dbCounters.closes.get(path) ?? 0;

/** Resolves once this process has closed `path` `count` times (the linger's timer does it; no timing is asserted). */
async function closed(path: string, count: number): Promise<void> {
  while (closes(path) < count) await new Promise((resolve) => setTimeout(resolve, 5));
}

function child(...args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [childScript, ...args], {
    cwd: repo, env: { ...process.env, NODE_PATH: join(repo, "node_modules") }, stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  proc.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => proc.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })));
}

test("operations queued on a session reuse one open; the handle then closes by itself and another process opens the database", async () => {
  const dir = freshDir();
  const store = openStore(dir);
  const id = newSessionId();
  const path = join(dir, "sessions", id);
  await store.append(id, [textEvent(id, "e0")]);
  await closeDatabases();
  // Issued at once, so each is queued behind the one before: reuse does not depend on timing.
  const writes = Array.from({ length: 4 }, (_, i) => store.append(id, [textEvent(id, `e${i + 1}`)]));
  const [, , , , loaded] = await Promise.all([...writes, store.load(id)]);
  assert.deepEqual(contents(loaded!), ["e0", "e1", "e2", "e3", "e4"]);
  assert.equal(opens(path), 2, "one LevelDB open for four appends and a load");
  await closed(path, 2);
  const other = await child("raw", path);
  assert.equal(other.stdout, "opened\n", other.stderr);
  // The index lingers for nothing: a list queued behind another reuses its open, a later one opens again.
  await Promise.all([store.list(), store.list()]);
  await store.list();
  const index = join(dir, "index");
  assert.deepEqual([opens(index), closes(index)], [2, 2], "the queued list reused the open; the last one opened again");
});

test("a write that fails in the middle of a burst closes the handle: the rest of the burst opens afresh, and nothing is wedged", async () => {
  const dir = freshDir();
  const store = openStore(dir);
  const id = newSessionId();
  const path = join(dir, "sessions", id);
  const unencodable = { ...textEvent(id, "bad"), ts: 1n } as unknown as KeenEvent;
  const results = await Promise.allSettled([
    store.append(id, [textEvent(id, "before")]),
    store.append(id, [unencodable]),
    store.append(id, [textEvent(id, "after")]),
  ]);
  assert.equal(results[0].status, "fulfilled");
  assert.equal(results[2].status, "fulfilled");
  assert.equal(results[1].status, "rejected");
  const error = (results[1] as PromiseRejectedResult).reason as Error;
  assert.ok(error instanceof StoreError, String(error));
  assert.ok(error.message.startsWith(`cannot write the session store at ${path}: `), error.message);
  assert.equal(opens(path), 2, "the failed write closed the handle; the next append opened again");
  assert.deepEqual(contents(await store.load(id)), ["before", "after"]);

  // A failure with nothing queued behind it leaves the database closed at once: this process itself can open it.
  await assert.rejects(store.append(id, [unencodable]), StoreError);
  const direct = new Level(path);
  await direct.open({ createIfMissing: false });
  await direct.close();
});

test("kill -9 right after a write, with the handle still open, loses nothing; a process that just ends exits with it open", async () => {
  const dir = freshDir();
  const id = newSessionId();
  const killed = await child(dir, id, "3", "kill");
  assert.equal(killed.signal, "SIGKILL", killed.stderr);
  assert.equal(killed.stdout, "stored\n");
  const store = openStore(dir);
  assert.deepEqual(contents(await store.load(id)), ["c:0", "c:1", "c:2"]);

  const other = newSessionId();
  const ended = await child(dir, other, "2", "exit");
  assert.equal(ended.code, 0, ended.stderr);
  assert.deepEqual(contents(await store.load(other)), ["c:0", "c:1"]);
});

test("a tight loop of operations here still lets a waiting process in (the handle is kept for a bounded time)", async () => {
  const dir = freshDir();
  const store = openStore(dir);
  const id = newSessionId();
  await store.append(id, [textEvent(id, "first")]);
  const waiter = child("wait", join(dir, "sessions", id));
  let done = false;
  void waiter.then(() => (done = true));
  // Back to back, each awaited: every one comes within the linger of the last, so the handle is never idle.
  let appended = 1;
  while (!done) await store.append(id, [textEvent(id, `e${appended++}`)]);
  const result = await waiter;
  assert.equal(result.stdout, "opened\n", result.stderr);
  assert.equal((await store.load(id)).length, appended);
});

test("create makes the new session's database beside the index's write: the first append opens nothing more", async () => {
  const dir = freshDir();
  const store = openStore(dir);
  const id = newSessionId();
  const path = join(dir, "sessions", id);
  await store.create({ id, title: "t", cwd: "/w", model: "m", created: 1, updated: 1, status: "running" }, { claim: true });
  assert.equal(opens(path), 1, "made by create");
  await store.append(id, [textEvent(id, "first")]);
  assert.equal(opens(path), 1, "the first append found it open");
  assert.deepEqual(contents(await store.load(id)), ["first"]);
  await closeDatabases(dir);
});

test("a create whose index write fails leaves no session database behind", async () => {
  const dir = freshDir();
  const store = openStore(dir);
  await store.list();
  const id = newSessionId();
  // Another process holds the index past the busy timeout: the create fails, and the session's directory goes.
  const holder = new Level(join(dir, "index"));
  await holder.open();
  try {
    const quick = openStore(dir, { busyTimeoutMs: 50 });
    await assert.rejects(quick.create({ id, title: "t", cwd: "/w", model: "m", created: 1, updated: 1, status: "running" }), /busy/);
    assert.equal(existsSync(join(dir, "sessions", id)), false);
  } finally {
    await holder.close();
  }
});
