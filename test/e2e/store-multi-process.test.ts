import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";
import { Level } from "level";
import { newSessionId } from "../../storage/ids.js";
import { openStore, StoreBusyError } from "../../storage/level-store.js";
import { SessionBusyError } from "../../storage/store.js";
import { makeTempDir } from "../temp.js";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const root = makeTempDir("keen-mp-");
const children = new Set<ChildProcess>();
after(() => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});
// The worker is bundled once (esbuild, milliseconds) and run by plain node: through tsx, each of the
// file's dozen workers compiled the store's TypeScript at its start (~0.6 s of CPU apiece). CommonJS,
// so that NODE_PATH finds the packages it leaves out (level's native binding among them).
const workerScript = join(root, "store-worker.cjs");
buildSync({
  entryPoints: [join(here, "store-worker.ts")], outfile: workerScript,
  bundle: true, platform: "node", format: "cjs", target: "node20", packages: "external", logLevel: "error",
});
const workerEnv = { ...process.env, NODE_PATH: join(repo, "node_modules") };
let dirs = 0;
const freshDir = () => join(root, `d${dirs++}`);

interface Worker {
  child: ChildProcess;
  lines: string[];
  stderr: () => string;
  /** Resolves with the first stdout line matching `predicate`. */
  waitFor(predicate: (line: string) => boolean): Promise<string>;
  exit: Promise<number | null>;
}

function worker(dataDir: string, ...args: string[]): Worker {
  const child = spawn(process.execPath, [workerScript, dataDir, ...args], {
    cwd: repo, env: workerEnv, stdio: [args[0] === "list" ? "pipe" : "ignore", "pipe", "pipe"],
  });
  children.add(child);
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  let err = "";
  let rest = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop()!;
    lines.push(...parts);
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => {
    children.delete(child);
    for (const wake of waiters.splice(0)) wake();
    resolve(code);
  }));
  return {
    child, lines, exit, stderr: () => err,
    async waitFor(predicate) {
      for (;;) {
        const found = lines.find(predicate);
        if (found !== undefined) return found;
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`worker exited: ${err}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

async function kill9(w: Worker) {
  w.child.kill("SIGKILL");
  await w.exit;
}

test("a claim held by a live process is busy; after kill -9 it is stale and taken over", async () => {
  const dir = freshDir();
  const store = openStore(dir);
  const id = newSessionId();
  const now = Date.now();
  await store.create({ id, title: "held", cwd: "/", model: "fake/m", created: now, updated: now, status: "running" });
  const holder = worker(dir, "hold", id);
  await holder.waitFor((line) => line === "claimed");

  await assert.rejects(store.claim(id), SessionBusyError);
  await assert.rejects(store.remove(id), SessionBusyError);
  assert.equal((await store.resolve(id)).status, "running");

  await kill9(holder);
  assert.equal((await store.list())[0]!.status, "interrupted");
  await store.claim(id);
  assert.equal((await store.resolve(id)).status, "running");
  await store.release(id, "success");
  assert.equal((await store.resolve(id)).status, "success");
});

test("a claim whose pid now belongs to another process (different start time) is stale", async () => {
  const dir = freshDir();
  const store = openStore(dir);
  const id = newSessionId();
  await store.list(); // creates the index
  const index = new Level<string, unknown>(join(dir, "index"), { valueEncoding: "json" });
  await index.put(`c:${id}`, { pid: process.pid, start: 1 });
  await index.close();
  await store.claim(id);
  await store.release(id, "success");
});

test("8 writers and a lister in parallel: all succeed, every event present and ordered", async () => {
  const dir = freshDir();
  const ids = Array.from({ length: 8 }, () => newSessionId());
  const started = performance.now();
  const lister = worker(dir, "list");
  const writers = ids.map((id, i) => worker(dir, "append", id, "50", `w${i}`));
  const writerCodes = await Promise.all(writers.map((w) => w.exit));
  lister.child.stdin!.end();
  const codes = [...writerCodes, await lister.exit];
  const elapsed = performance.now() - started;
  for (const w of [...writers, lister]) {
    assert.doesNotMatch(w.stderr(), /LEVEL_/);
  }
  assert.deepEqual(codes, Array(9).fill(0), writers.map((w) => w.stderr()).join("\n"));
  const store = openStore(dir);
  for (const [i, id] of ids.entries()) {
    const contents = (await store.load(id)).map((e) => (e as { content: string }).content);
    assert.deepEqual(contents, Array.from({ length: 50 }, (_, j) => `w${i}:${j}`));
  }
  assert.ok(Number(lister.lines[0]) >= 1, `the lister listed: ${lister.lines[0]}`);
  const listed = await store.list();
  assert.equal(listed.length, 8);
  assert.ok(listed.every((m) => m.status === "success"));
  const own = writers.map((w) => Number(w.lines[0]!.split(" ")[1]));
  console.error(
    `storage: 8 writers × (create, claim, 50 appends, release) + a lister (${lister.lines[0]} lists): ` +
      `${elapsed.toFixed(0)} ms wall with process start-up; per writer ${Math.min(...own)}–${Math.max(...own)} ms`,
  );
});

test("another process reads while one appends; kill -9 mid-append leaves a readable prefix", async () => {
  const dir = freshDir();
  const store = openStore(dir);
  const id = newSessionId();
  const streamer = worker(dir, "stream", id);
  await streamer.waitFor((line) => Number(line) >= 20);
  const lengths: number[] = [];
  for (let i = 0; i < 20; i++) {
    const contents = (await store.load(id)).map((e) => (e as { content: string }).content);
    assert.deepEqual(contents, contents.map((_, j) => `s:${j}`));
    lengths.push(contents.length);
  }
  assert.deepEqual([...lengths].sort((a, b) => a - b), lengths);
  await streamer.waitFor((line) => Number(line) >= 150);
  await kill9(streamer);
  const acknowledged = Number(streamer.lines.at(-1)) + 1;
  const started = performance.now();
  const contents = (await store.load(id)).map((e) => (e as { content: string }).content);
  const reopenMs = performance.now() - started;
  assert.ok(contents.length >= acknowledged, `${contents.length} < ${acknowledged}`);
  assert.deepEqual(contents, contents.map((_, j) => `s:${j}`));
  // The store keeps working for the next writer.
  await store.append(id, [{ kind: "text", conversation_id: id, ts: 0, role: "assistant", content: `s:${contents.length}` }]);
  assert.equal((await store.load(id)).length, contents.length + 1);
  console.error(`storage: reopen after kill -9 and load ${contents.length} events: ${reopenMs.toFixed(1)} ms`);
});

test("a database held past the busy timeout gives StoreBusyError, never the LevelDB lock error", async () => {
  const dir = freshDir();
  await openStore(dir).list();
  const script = `import { buildSync } from "esbuild";
import { Level } from "level"; const db = new Level(${JSON.stringify(join(dir, "index"))});` +
    ` await db.open(); console.log("open"); setInterval(() => {}, 60000);`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { cwd: repo, stdio: ["ignore", "pipe", "inherit"] });
  children.add(child);
  await new Promise((resolve) => child.stdout!.once("data", resolve));
  const impatient = openStore(dir, { busyTimeoutMs: 300 });
  await assert.rejects(impatient.list(), (error: Error) => {
    assert.ok(error instanceof StoreBusyError);
    assert.equal(error.name, "StoreBusyError");
    assert.equal(error.message, "session store is busy; another keen process holds it for too long");
    return true;
  });
  const waiting = openStore(dir).list();
  setTimeout(() => child.kill("SIGKILL"), 200);
  assert.deepEqual(await waiting, []);
});
