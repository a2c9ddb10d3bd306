import { statSync } from "node:fs";
import { dirname } from "node:path";
import { Level } from "level";
import { SessionBusyError, StoreError, UnknownSessionError } from "./store.js";

/** Raised when a store database stayed locked by other keen processes past the busy timeout. */
export class StoreBusyError extends Error {
  override name = "StoreBusyError";
  readonly exitCode = 1;
  constructor() {
    super("session store is busy; another keen process holds it for too long");
  }
}

/** A LevelDB handle with JSON values. */
export type Db = Level<string, unknown>;

/** A key after every other key, rewritten by every write batch (see `compactTail`). */
export const TAIL_KEY = "~tail";

/** classic-level methods that the `level` typings do not expose. */
interface NativeDb {
  getProperty(name: string): string;
  compactRange(start: string, end: string): Promise<void>;
}

const queues = new Map<string, Promise<unknown>>();

/** Run `work` after every earlier queued operation on `path` in this process has settled. */
export function serialise<T>(path: string, work: () => Promise<T>): Promise<T> {
  const run = (queues.get(path) ?? Promise.resolve()).then(work);
  const settled = run.then(noop, noop);
  queues.set(path, settled);
  void settled.then(() => {
    if (queues.get(path) === settled) queues.delete(path);
  });
  return run;
}

/**
 * Open the database at `path`, run `work`, close it. Contract: operations on one
 * path are serialised within this process (LevelDB would refuse our own second
 * open); across processes a locked database is retried with jittered backoff
 * until `busyTimeoutMs`, then StoreBusyError — the lock error never escapes.
 * Any other failure of LevelDB or the file system (read-only or full disk, a
 * damaged database, a file in a directory's place) becomes a StoreError naming
 * `path`; `action` says what the caller was doing. Errors `work` throws on
 * purpose (busy or unknown session) pass through.
 */
export function withDb<T>(
  path: string,
  options: { create: boolean; busyTimeoutMs: number; action: "read" | "write" },
  work: (db: Db) => Promise<T>,
): Promise<T> {
  return serialise(path, async () => {
    let db: Db | undefined;
    try {
      checkNoFileInTheWay(path);
      db = await openDb(path, options.create, Date.now() + options.busyTimeoutMs);
      return await work(db);
    } catch (error) {
      throw storeError(options.action, path, error);
    } finally {
      // A close that fails after a failed write adds nothing to report.
      await db?.close().catch(() => {});
    }
  });
}

/** `error` as the store reports it: our own errors as they are, anything else a StoreError naming `path`. */
export function storeError(action: "read" | "write", path: string, error: unknown): unknown {
  const ours = [StoreError, StoreBusyError, SessionBusyError, UnknownSessionError];
  return ours.some((kind) => error instanceof kind) ? error : new StoreError(action, path, error);
}

/**
 * LevelDB says "file already exists, mkdir" or ENOTDIR when a file sits where
 * the database directory (or a directory above it) belongs: name that file.
 */
export function checkNoFileInTheWay(path: string): void {
  for (let at = path; ; at = dirname(at)) {
    let stat;
    try {
      stat = statSync(at, { throwIfNoEntry: false });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOTDIR") continue;
      throw error;
    }
    if (stat && !stat.isDirectory()) {
      throw new Error(at === path ? "not a directory (a file is in its place)" : `${at} is not a directory (a file is in its place)`);
    }
    // The first ancestor that exists is a directory: nothing is in the way.
    if (stat || dirname(at) === at) return;
  }
}

async function openDb(path: string, create: boolean, deadline: number): Promise<Db> {
  for (let attempt = 0; ; attempt++) {
    // maxFileSize: LevelDB's minimum (1 MB) bounds what one tail compaction rewrites.
    const db: Db = new Level<string, unknown>(path, { valueEncoding: "json", maxFileSize: 1 << 20 });
    try {
      await db.open({ createIfMissing: create });
      return db;
    } catch (error) {
      if (!isLocked(error)) throw error;
      if (Date.now() >= deadline) throw new StoreBusyError();
      // Holders keep the lock for milliseconds: retry soon, spread out so waiters do not collide again.
      const ceiling = Math.min(20, 2 + 2 * attempt);
      await sleep(ceiling / 2 + (Math.random() * ceiling) / 2);
    }
  }
}

function isLocked(error: unknown): boolean {
  const e = error as { code?: string; cause?: { code?: string } } | null;
  return e?.code === "LEVEL_LOCKED" || e?.cause?.code === "LEVEL_LOCKED";
}

/** True when enough level-0 tables piled up that this write should also merge them (LevelDB's own trigger is 4). */
export function needsCompaction(db: Db): boolean {
  return Number((db as unknown as NativeDb).getProperty("leveldb.num-files-at-level0")) >= 4;
}

/**
 * Merge the tables holding keys from `start` to TAIL_KEY. Why: every open turns
 * the last writer's log into a new table, and open/write/close per append would
 * leave one tiny table per append (10,000 files for 10,000 appends; opens and
 * reads slow down badly). Because every batch rewrites TAIL_KEY, each new table
 * overlaps the previous one, lands in level 0 and can be merged here; the
 * rewrite is bounded by the newest level-1 file (≤ 1 MB).
 */
export async function compactTail(db: Db, start: string): Promise<void> {
  await (db as unknown as NativeDb).compactRange(start, TAIL_KEY);
}

function noop(): void {}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
