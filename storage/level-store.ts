/*
 * Session storage on LevelDB, safe for many keen processes at once.
 *
 * LevelDB lets one process open a database directory at a time, so Keen keeps
 * one small database per session (`<dataDir>/sessions/<id>/`: the append-only
 * events under zero-padded keys `e:<seq>`, values the event JSON) and one index
 * database (`<dataDir>/index/`: `s:<id>` → SessionMeta, `c:<id>` → the claim
 * `{pid, start}` of the process writing that session). An operation on the
 * index opens it, does its work and closes it; a session's database is kept
 * open for the operations that follow within SESSION_LINGER_MS (a run's writes
 * come in bursts), never longer than MAX_HOLD_MS without a free spell (see
 * level-db.ts). So a lock is held for milliseconds and parallel runs, listings
 * and readers interleave; a process that finds a database locked retries with short jittered backoff
 * for up to 15 s and then reports "session store is busy" — never a raw lock
 * error. Sessions never contend with each other; only the index is shared.
 * A claim is an atomic test-and-set inside one index open: a claim held by a
 * live process (same pid and same start time, so a reused pid does not count)
 * makes the session busy; a dead holder's claim is taken over, and a session
 * left `running` by a dead process is listed as `interrupted`. Events are
 * written as they complete (the recorder makes the loop wait where it must, see
 * recorder.ts), so `kill -9` loses at most in-flight text; LevelDB replays its
 * log on the next open, which succeeds at once. Any other failure of LevelDB or
 * the file system (read-only or full disk, a damaged database, a file where a
 * directory belongs) is a StoreError naming the path and the cause; a damaged
 * session database affects only that session, since listing reads the index. Because every open
 * turns the previous log into a table file, each write batch also rewrites a
 * tail key and merges small tables once four pile up (see level-db.ts): file
 * count and resume time stay flat however many appends a session has had.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { KeenEvent } from "../protocol/events.js";
import { newEventKey } from "./ids.js";
import { checkNoFileInTheWay, closeDatabases, compactTail, needsCompaction, SESSION_LINGER_MS, storeError, TAIL_KEY, withDb, withoutDb, type Db } from "./level-db.js";
import { isClaimLive, isOwnClaim, ownClaim, type ProcessClaim } from "./process-info.js";
import { SessionBusyError, UnknownSessionError, type SessionMeta, type SessionStore } from "./store.js";

export { StoreBusyError } from "./level-db.js";

/** Options for `openStore`. */
export interface LevelStoreOptions {
  /** How long to wait for another process to release a database (default 15 s). */
  busyTimeoutMs?: number;
}

/** Where a session database's append position stands; stored under TAIL_KEY. */
interface SessionTail {
  /** Sequence number of the next event. */
  next: number;
  /** Events below this were merged by the last compaction. */
  compacted: number;
  /** Sequence number of the last `context-replacement` event: a resume reads from there. */
  checkpoint?: number;
}

/** True when a session's database exists (a session with no events yet has none: do not create one to read it). */
function present(path: string): boolean {
  try {
    return holdsDatabase(path);
  } catch (error) {
    throw storeError("read", path, error);
  }
}

/** Key of a copy of a `permission-rule` event, so a read from the checkpoint still finds the rules before it. */
const ruleKey = (seq: number) => `r:${String(seq).padStart(12, "0")}`;

type Put = { type: "put"; key: string; value: unknown };
type Del = { type: "del"; key: string };

const SAFE_ID = /^[A-Za-z0-9_-]+$/;
/** Events per LevelDB read when loading a session (abstract-level's own `all()` reads 1,000 at a time). */
const READ_BATCH = 1000;
const MAX_LISTED = 5;
/** How long a new session's database stays open for its first append (a run's first turn comes within ~20 ms). */
const CREATED_LINGER_MS = 250;

/** The LevelDB session store rooted at `dataDir`; opening it touches no file. */
export function openStore(dataDir: string, options: LevelStoreOptions = {}): SessionStore {
  const busyTimeoutMs = options.busyTimeoutMs ?? 15_000;
  // Absolute, so two store objects in one process share the per-path queues.
  const root = resolve(dataDir);
  const indexPath = join(root, "index");

  const sessionPath = (id: string) => {
    // The id becomes a directory that `remove` deletes: never let it leave sessions/.
    if (!SAFE_ID.test(id)) throw new UnknownSessionError(`no session matches '${id}'`);
    return join(root, "sessions", id);
  };
  const withIndex = <T>(action: "read" | "write", work: (db: Db) => Promise<T>) =>
    withDb(indexPath, { create: true, busyTimeoutMs, action }, work);

  return {
    async create(meta, options) {
      const ops: Put[] = [{ type: "put", key: `s:${meta.id}`, value: meta }];
      if (options?.claim) ops.push({ type: "put", key: `c:${meta.id}`, value: ownClaim() });
      // The new session's database is made beside the index's write rather than at the first append after it:
      // making one costs ~10 ms of wall time, which a run's first request waited for (docs/performance.md,
      // "Ninth pass"). Kept open for the first append; no other process knows the id yet.
      const path = sessionPath(meta.id);
      const made = withDb(path, { create: true, busyTimeoutMs, action: "write", lingerMs: CREATED_LINGER_MS }, async () => {});
      try {
        await withIndex("write", (db) => commitIndex(db, ops));
      } catch (error) {
        // No session without its index entry: the database made for it goes.
        await made.catch(() => {});
        await withoutDb(path, () => rm(path, { recursive: true, force: true })).catch(() => {});
        throw error;
      }
      // A failure here is the first append's to report (it opens again): creating loses nothing.
      await made.catch(() => {});
    },

    async claim(id) {
      await withIndex("write", async (db) => {
        const held = (await db.get(`c:${id}`)) as ProcessClaim | undefined;
        if (held && isClaimLive(held)) throw new SessionBusyError(id);
        await commitIndex(db, [{ type: "put", key: `c:${id}`, value: ownClaim() }]);
      });
    },

    async release(id, status) {
      await withIndex("write", async (db) => {
        const ops: Array<Put | Del> = [];
        const held = (await db.get(`c:${id}`)) as ProcessClaim | undefined;
        if (held && isOwnClaim(held)) ops.push({ type: "del", key: `c:${id}` });
        const meta = (await db.get(`s:${id}`)) as SessionMeta | undefined;
        if (meta) ops.push({ type: "put", key: `s:${id}`, value: { ...meta, status, updated: Date.now() } });
        await commitIndex(db, ops);
      });
    },

    async append(id, events) {
      if (events.length === 0) return;
      await withDb(sessionPath(id), { create: true, busyTimeoutMs, action: "write", lingerMs: SESSION_LINGER_MS }, async (db) => {
        // Read under the lock rather than cached: exact even if two processes append without a claim.
        const tail = ((await db.get(TAIL_KEY)) as SessionTail | undefined) ?? { next: 0, compacted: 0 };
        const compact = needsCompaction(db);
        const next = tail.next + events.length;
        const ops: Put[] = events.map((value, i) => ({ type: "put", key: newEventKey(tail.next + i), value }));
        let checkpoint = tail.checkpoint;
        events.forEach((event, i) => {
          if (event.kind === "context-replacement") checkpoint = tail.next + i;
          if (event.kind === "permission-rule") ops.push({ type: "put", key: ruleKey(tail.next + i), value: event });
        });
        ops.push(tailOp({ next, compacted: compact ? next : tail.compacted, ...(checkpoint !== undefined ? { checkpoint } : {}) } satisfies SessionTail));
        await db.batch(ops);
        if (compact) await compactTail(db, newEventKey(tail.compacted));
      });
    },

    async updateMeta(id, patch) {
      await withIndex("write", async (db) => {
        const meta = (await db.get(`s:${id}`)) as SessionMeta | undefined;
        if (!meta) throw new UnknownSessionError(`no session matches '${id}'`);
        const value: SessionMeta = { ...meta, updated: Date.now(), ...patch, id };
        await commitIndex(db, [{ type: "put", key: `s:${id}`, value }]);
      });
    },

    async list() {
      const { metas, claims } = await withIndex("read", async (db) => ({
        metas: await readMetas(db),
        claims: await readClaims(db),
      }));
      return metas.map((meta) => effective(meta, claims.get(meta.id))).sort(newestFirst);
    },

    async resolve(idOrPrefix) {
      const wanted = idOrPrefix.trim().toLowerCase();
      if (!wanted) throw new UnknownSessionError(`no session matches '${idOrPrefix}'`);
      const { metas, claim } = await withIndex("read", async (db) => {
        const exact = (await db.get(`s:${wanted}`)) as SessionMeta | undefined;
        const metas = exact
          ? [exact]
          : ((await db.values({ gte: `s:${wanted}`, lt: `s:${wanted}\uffff` }).all()) as SessionMeta[]);
        const claim = metas.length === 1 ? ((await db.get(`c:${metas[0]!.id}`)) as ProcessClaim | undefined) : undefined;
        return { metas, claim };
      });
      if (metas.length === 0) throw new UnknownSessionError(`no session matches '${idOrPrefix}'`);
      if (metas.length > 1) {
        const ids = metas.slice(0, MAX_LISTED).map((m) => m.id).join(", ");
        const more = metas.length > MAX_LISTED ? ", …" : "";
        throw new UnknownSessionError(`'${idOrPrefix}' matches ${metas.length} sessions: ${ids}${more}; give more characters`);
      }
      return effective(metas[0]!, claim);
    },

    async load(id) {
      const path = sessionPath(id);
      // A session with no events yet has no database; do not create one just to read it.
      if (!present(path)) return [];
      return withDb(path, { create: false, busyTimeoutMs, action: "read", lingerMs: SESSION_LINGER_MS }, (db) => readEvents(db));
    },

    async loadRecent(id) {
      const path = sessionPath(id);
      if (!present(path)) return { events: [], offset: 0, rules: [] };
      return withDb(path, { create: false, busyTimeoutMs, action: "read", lingerMs: SESSION_LINGER_MS }, async (db) => {
        const offset = ((await db.get(TAIL_KEY)) as SessionTail | undefined)?.checkpoint ?? 0;
        if (offset === 0) return { events: await readEvents(db), offset, rules: [] };
        const events = await readEvents(db, newEventKey(offset), "e;");
        const rules = await readEvents(db, "r:", ruleKey(offset));
        return { events, offset, rules };
      });
    },

    close() {
      return closeDatabases(root);
    },

    async remove(id) {
      const path = sessionPath(id);
      await withIndex("write", async (db) => {
        const held = (await db.get(`c:${id}`)) as ProcessClaim | undefined;
        if (held && isClaimLive(held)) throw new SessionBusyError(id);
        const meta = await db.get(`s:${id}`);
        if (!meta && !existsSync(path)) throw new UnknownSessionError(`no session matches '${id}'`);
        await commitIndex(db, [{ type: "del", key: `s:${id}` }, { type: "del", key: `c:${id}` }]);
      });
      // Through the same per-path queue as appends, with this process's handle closed: never deleted under its own open.
      await withoutDb(path, () => rm(path, { recursive: true, force: true })).catch((error) => {
        throw storeError("write", path, error);
      });
    },
  };
}

/**
 * Every event of a session database, in order. LevelDB reads a batch on libuv's
 * thread pool while this thread parses the batch before it, so a long session
 * resumes in about the time of the slower of the two rather than their sum.
 */
async function readEvents(db: Db, gte = "e:", lt = "e;"): Promise<KeenEvent[]> {
  const iterator = db.values({ gte, lt, valueEncoding: "utf8" });
  const events: KeenEvent[] = [];
  let next: Promise<string[]> | undefined;
  try {
    let batch = (await iterator.nextv(READ_BATCH)) as string[];
    while (batch.length > 0) {
      next = iterator.nextv(READ_BATCH) as Promise<string[]>;
      for (const text of batch) events.push(JSON.parse(text) as KeenEvent);
      batch = await next;
      next = undefined;
    }
  } finally {
    // A parse error leaves a read in flight; the iterator closes once it settles.
    await next?.catch(() => {});
    await iterator.close();
  }
  return events;
}

/** One index batch; it also rewrites the tail key and merges small tables once they pile up (see compactTail). */
async function commitIndex(db: Db, ops: Array<Put | Del>): Promise<void> {
  const compact = needsCompaction(db);
  await db.batch([...ops, tailOp(Date.now())]);
  if (compact) await compactTail(db, "");
}

function tailOp(value: unknown): Put {
  return { type: "put", key: TAIL_KEY, value };
}

/**
 * False when nothing was ever written at `path`: no directory, or one that a
 * process killed while creating the database left without table, log or
 * manifest. A directory with database files but no CURRENT counts as a
 * database, so opening it reports the damage; a file in the way throws.
 */
function holdsDatabase(path: string): boolean {
  checkNoFileInTheWay(path);
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return false;
  if (existsSync(join(path, "CURRENT"))) return true;
  return readdirSync(path).some((name) => /^(MANIFEST-|\d+\.(log|ldb|sst)$)/.test(name));
}

/**
 * Every session's meta. Read as text and parsed one by one: a damaged entry is
 * left out rather than hiding every other session.
 */
async function readMetas(db: Db): Promise<SessionMeta[]> {
  const texts = (await db.values({ gte: "s:", lt: "s;", valueEncoding: "utf8" }).all()) as string[];
  return texts.flatMap((text) => {
    try {
      const meta = JSON.parse(text) as SessionMeta;
      return meta && typeof meta.id === "string" ? [meta] : [];
    } catch {
      return [];
    }
  });
}

async function readClaims(db: Db): Promise<Map<string, ProcessClaim>> {
  const entries = await db.iterator({ gte: "c:", lt: "c;" }).all();
  return new Map(entries.map(([key, claim]) => [key.slice(2), claim as ProcessClaim]));
}

/** A session left `running` whose writer is gone was interrupted (killed, crashed). */
function effective(meta: SessionMeta, claim: ProcessClaim | undefined): SessionMeta {
  // Words an older Keen stored, in today's vocabulary.
  const legacy = ({ idle: "success", failed: "error" } as Record<string, SessionMeta["status"]>)[meta.status];
  if (legacy) return { ...meta, status: legacy };
  if (meta.status !== "running") return meta;
  if (claim && isClaimLive(claim)) return meta;
  return { ...meta, status: "interrupted" };
}

function newestFirst(a: SessionMeta, b: SessionMeta): number {
  return b.updated - a.updated || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}
