import { after, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KeenEvent } from "../../protocol/events.js";
import { newSessionId } from "../../storage/ids.js";
import { closeDatabases } from "../../storage/level-db.js";
import { openStore } from "../../storage/level-store.js";
import { SessionBusyError, StoreError, UnknownSessionError, type SessionMeta } from "../../storage/store.js";
import { makeTempDir } from "../temp.js";

const root = makeTempDir("keen-store-");
after(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(root, `d${dirs++}`);

function meta(id: string, updated: number, extra: Partial<SessionMeta> = {}): SessionMeta {
  return { id, title: `t-${id.slice(-4)}`, cwd: "/w", model: "fake/m", created: updated, updated, status: "success", ...extra };
}
function textEvent(id: string, content: string): KeenEvent {
  return { kind: "text", conversation_id: id, ts: 0, role: "assistant", content };
}

test("create, list newest first, resolve by id and prefix", async () => {
  const store = openStore(freshDir());
  assert.deepEqual(await store.list(), []);
  const a = "0190aaaa-0000-7000-8000-000000000001";
  const b = "0190aaab-0000-7000-8000-000000000002";
  const c = "0190bbbb-0000-7000-8000-000000000003";
  await store.create(meta(a, 100));
  await store.create(meta(b, 300));
  await store.create(meta(c, 200));
  assert.deepEqual((await store.list()).map((m) => m.id), [b, c, a]);

  assert.equal((await store.resolve(c)).id, c);
  assert.equal((await store.resolve("0190b")).id, c);
  assert.equal((await store.resolve("0190AAAB")).id, b);
  await assert.rejects(store.resolve("0190aaa"), (e: Error) => {
    assert.ok(e instanceof UnknownSessionError);
    assert.equal(e.message, `'0190aaa' matches 2 sessions: ${a}, ${b}; give more characters`);
    return true;
  });
  await assert.rejects(store.resolve("ffff"), new UnknownSessionError("no session matches 'ffff'"));
  await assert.rejects(store.resolve(""), UnknownSessionError);
});

test("append keeps order across calls; load of an empty session is empty", async () => {
  const dir = freshDir();
  const store = openStore(dir);
  const id = newSessionId();
  await store.create(meta(id, 1));
  assert.deepEqual(await store.load(id), []);
  const written: KeenEvent[] = [];
  for (let i = 0; i < 30; i++) {
    const batch = Array.from({ length: (i % 3) + 1 }, (_, j) => textEvent(id, `${i}.${j}`));
    written.push(...batch);
    await store.append(id, batch);
  }
  await store.append(id, []);
  assert.deepEqual(await store.load(id), written);
  // A second store object (as a later process would have) continues the sequence.
  await openStore(dir).append(id, [textEvent(id, "later")]);
  assert.deepEqual((await store.load(id)).at(-1), textEvent(id, "later"));
});

test("concurrent appends from one process keep call order, even through two store objects", async () => {
  const dir = freshDir();
  const store = openStore(dir);
  const other = openStore(dir);
  const id = newSessionId();
  const calls = Array.from({ length: 40 }, (_, i) => (i % 2 ? other : store).append(id, [textEvent(id, String(i))]));
  await Promise.all([...calls, store.list(), store.load(id)]);
  assert.deepEqual((await store.load(id)).map((e) => (e as { content: string }).content), calls.map((_, i) => String(i)));
});

test("updateMeta merges and bumps updated; unknown ids are refused", async () => {
  const store = openStore(freshDir());
  const id = newSessionId();
  await store.create(meta(id, 1));
  await store.updateMeta(id, { title: "renamed" });
  const got = await store.resolve(id);
  assert.equal(got.title, "renamed");
  assert.ok(got.updated > 1);
  await store.updateMeta(id, { updated: 5 });
  assert.equal((await store.resolve(id)).updated, 5);
  await assert.rejects(store.updateMeta(newSessionId(), { title: "x" }), UnknownSessionError);
});

test("claim, busy within the process, release records status, claim again", async () => {
  const store = openStore(freshDir());
  const id = newSessionId();
  await store.create(meta(id, 1, { status: "running" }));
  await store.claim(id);
  await assert.rejects(store.claim(id), SessionBusyError);
  await assert.rejects(store.remove(id), SessionBusyError);
  assert.equal((await store.resolve(id)).status, "running");
  await store.release(id, "error");
  const released = await store.resolve(id);
  assert.equal(released.status, "error");
  assert.ok(released.updated > 1);
  await store.claim(id);
  await store.release(id, "success");
});

test("load reads a session longer than one read batch, in order; a corrupt event rejects instead of hanging", async () => {
  const dir = freshDir();
  const store = openStore(dir);
  const id = newSessionId();
  await store.create(meta(id, 1));
  const written = Array.from({ length: 2_345 }, (_, i) => textEvent(id, `event ${i}`));
  for (let i = 0; i < written.length; i += 500) await store.append(id, written.slice(i, i + 500));
  assert.deepEqual(await store.load(id), written);

  // This process's handle lingers after the load (level-db.ts): close it before opening the database directly.
  await closeDatabases();
  const { Level } = await import("level");
  const db = new Level<string, string>(join(dir, "sessions", id), { valueEncoding: "utf8" });
  await db.put("e:000000001500", "{not json");
  await db.close();
  await assert.rejects(store.load(id), (error: Error) => {
    assert.ok(error instanceof StoreError);
    // The parser's own words in parentheses, whatever this Node's JSON.parse says (Node 24 adds the line and column).
    assert.equal(error.message, `cannot read the session store at ${join(dir, "sessions", id)}: the database is damaged (${jsonParseMessage("{not json")})`);
    return true;
  });
  await store.append(id, [textEvent(id, "after")]);
});

test("create with claim holds the new session in the same write", async () => {
  const store = openStore(freshDir());
  const id = newSessionId();
  await store.create(meta(id, 1, { status: "running" }), { claim: true });
  assert.equal((await store.resolve(id)).status, "running", "held by this live process, so not interrupted");
  await assert.rejects(store.claim(id), SessionBusyError);
  await assert.rejects(store.remove(id), SessionBusyError);
  await store.release(id, "success");
  await store.claim(id);
  await store.release(id, "success");
});

test("running without a live claim is reported as interrupted", async () => {
  const store = openStore(freshDir());
  const id = newSessionId();
  await store.create(meta(id, 1, { status: "running" }));
  assert.equal((await store.list())[0]!.status, "interrupted");
  assert.equal((await store.resolve(id)).status, "interrupted");
});

test("remove deletes the index entries and the session directory", async () => {
  const dir = freshDir();
  const store = openStore(dir);
  const keep = newSessionId();
  const gone = newSessionId();
  await store.create(meta(keep, 1));
  await store.create(meta(gone, 2));
  await store.append(gone, [textEvent(gone, "x")]);
  assert.ok(existsSync(join(dir, "sessions", gone)));
  await store.remove(gone);
  assert.ok(!existsSync(join(dir, "sessions", gone)));
  assert.deepEqual((await store.list()).map((m) => m.id), [keep]);
  await assert.rejects(store.resolve(gone), UnknownSessionError);
  await assert.rejects(store.remove(gone), UnknownSessionError);
  await assert.rejects(store.load("../../etc"), UnknownSessionError);
});

test("a file where a database directory belongs, garbage in a session's files: one StoreError naming the path and the cause", async () => {
  const dir = freshDir();
  const store = openStore(dir);
  const [file, damaged, fine] = [newSessionId(), newSessionId(), newSessionId()];
  for (const [i, id] of [file, damaged, fine].entries()) {
    await store.create(meta(id, i + 1));
    await store.append(id, [textEvent(id, "stored")]);
  }
  // The files are damaged behind the store's back: not under a handle it keeps open (level-db.ts).
  await closeDatabases();
  rmSync(join(dir, "sessions", file), { recursive: true });
  writeFileSync(join(dir, "sessions", file), "not a database");
  const notDir = `cannot write the session store at ${join(dir, "sessions", file)}: not a directory (a file is in its place)`;
  await assert.rejects(store.append(file, [textEvent(file, "x")]), { name: "StoreError", message: notDir });
  await assert.rejects(store.load(file), { name: "StoreError", message: notDir.replace("write", "read") });

  for (const name of readdirSync(join(dir, "sessions", damaged))) writeFileSync(join(dir, "sessions", damaged, name), "garbage ".repeat(40));
  await assert.rejects(store.load(damaged), (error: Error) => {
    assert.ok(error instanceof StoreError, String(error));
    assert.match(error.message, new RegExp(`^cannot read the session store at ${join(dir, "sessions", damaged)}: the database is damaged \\(Corruption: [^\n]+\\)$`));
    return true;
  });
  // The index does not depend on a session's own database.
  assert.deepEqual((await store.list()).map((m) => m.id), [fine, damaged, file]);
  assert.equal((await store.load(fine)).length, 1);
  await store.remove(damaged);

  // A damaged index entry hides only itself.
  const { Level } = await import("level");
  const index = new Level<string, string>(join(dir, "index"), { valueEncoding: "utf8" });
  await index.put(`s:${fine}`, "{garbage");
  await index.close();
  assert.deepEqual((await store.list()).map((m) => m.id), [file]);
});

test("an index directory replaced by a file: every operation says so", async () => {
  const dir = freshDir();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "index"), "");
  const store = openStore(dir);
  const message = `cannot read the session store at ${join(dir, "index")}: not a directory (a file is in its place)`;
  await assert.rejects(store.list(), { name: "StoreError", message });
  await assert.rejects(store.create(meta(newSessionId(), 1)), { name: "StoreError", message: message.replace("read", "write") });
});

test("a session directory that a killed process left without a database loads as empty", async () => {
  const dir = freshDir();
  const store = openStore(dir);
  const id = newSessionId();
  await store.create(meta(id, 1));
  mkdirSync(join(dir, "sessions", id), { recursive: true });
  writeFileSync(join(dir, "sessions", id, "LOCK"), "");
  assert.deepEqual(await store.load(id), []);
  await store.append(id, [textEvent(id, "after")]);
  assert.equal((await store.load(id)).length, 1);
});

test("many single-event appends keep the file count and resume time flat", async () => {
  const dir = freshDir();
  const store = openStore(dir);
  const id = newSessionId();
  for (let i = 0; i < 400; i++) await store.append(id, [textEvent(id, `e${i}`)]);
  const tables = readdirSync(join(dir, "sessions", id)).filter((f) => f.endsWith(".ldb"));
  assert.ok(tables.length <= 8, `${tables.length} table files`);
  await store.create(meta(id, 1));
  for (let i = 0; i < 300; i++) await store.updateMeta(id, { title: `t${i}` });
  const indexTables = readdirSync(join(dir, "index")).filter((f) => f.endsWith(".ldb"));
  assert.ok(indexTables.length <= 8, `${indexTables.length} index table files`);
  assert.equal((await store.load(id)).length, 400);
});
test("loadRecent reads from the last context replacement on, with the permission rules stored before it", async () => {
  const store = openStore(freshDir());
  const id = newSessionId();
  await store.create(meta(id, 1));
  const base = { conversation_id: id, ts: 0 };
  const replacement = (n: string): KeenEvent => ({
    kind: "context-replacement", ...base, trigger: "auto", messages: [{ role: "user", content: [{ type: "text", text: n }] }],
  });
  const rule: KeenEvent = { kind: "permission-rule", ...base, tool_name: "bash", decision: "allow" };
  assert.deepEqual(await store.loadRecent(id), { events: [], offset: 0, rules: [] });
  await store.append(id, [textEvent(id, "a"), rule, textEvent(id, "b")]);
  assert.deepEqual(await store.loadRecent(id), { events: await store.load(id), offset: 0, rules: [] });
  await store.append(id, [replacement("first"), textEvent(id, "c")]);
  await store.append(id, [textEvent(id, "d"), replacement("second"), textEvent(id, "e")]);
  const recent = await store.loadRecent(id);
  assert.equal(recent.offset, 6);
  assert.deepEqual(recent.events, (await store.load(id)).slice(6));
  assert.deepEqual(recent.rules, [rule]);
});

function jsonParseMessage(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${text} parsed`);
}
