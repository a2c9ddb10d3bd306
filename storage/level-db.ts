import { existsSync, statSync } from "node:fs";
import { dirname, join, sep } from "node:path";
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
/** The settled-promise of the operation running on each path: another in `queues` means one is queued behind it. */
const current = new Map<string, Promise<unknown>>();

/** Run `work` after every earlier queued operation on `path` in this process has settled. */
export function serialise<T>(path: string, work: () => Promise<T>): Promise<T> {
  let settled: Promise<unknown>;
  const run = (queues.get(path) ?? Promise.resolve()).then(() => {
    current.set(path, settled);
    return work();
  });
  settled = run.then(noop, noop);
  queues.set(path, settled);
  void settled.then(() => {
    if (current.get(path) === settled) current.delete(path);
    if (queues.get(path) === settled) queues.delete(path);
  });
  return run;
}

/**
 * How long a database stays open after an operation, in case this process has
 * another for it. Why: an open costs 2–65 ms of wall time on this 2-core machine
 * (two thread-pool steps, LevelDB's log replay into a table, each step issued
 * from a callback on a busy main thread), and a run's writes to its session come
 * in bursts: after the first delta of a one-turn text run, each write was issued
 * as the one before it finished, and the other gaps were 6–13 ms; 15 ms left one
 * session open per run even at load 16 (docs/performance.md, "Seventh pass";
 * before: 5 in a text run, 8 with a bash call). Only for a session's database: the index
 * is touched at a run's start and end, far apart, and lingering there would make
 * parallel runs wait for nothing.
 */
export const SESSION_LINGER_MS = 15;
/**
 * A handle is reused (queued operations, the linger) for at most this long while
 * the database has had no free spell of COOL_MS; then it closes after the
 * operation in flight and this process leaves the path alone for COOL_MS. Why:
 * a waiting process retries at most 20 ms apart (see `openDb`), so a 25 ms gap
 * lets it in: another process never waits much more than MAX_HOLD_MS plus one
 * operation, even behind a tight loop of operations here (a lister, a stream of
 * appends). The measured runs' bursts were under 100 ms; a longer one pays one
 * COOL_MS pause per MAX_HOLD_MS, less than the opens it saves.
 */
export const MAX_HOLD_MS = 250;
export const COOL_MS = 25;

/** An open database this process keeps between operations on its path. */
interface Held {
  db: Db;
  /** The linger's timer while no operation runs. */
  timer?: NodeJS.Timeout;
}

/** Per path: the open handle, if any, and since when the path has been held without a COOL_MS gap. */
const held = new Map<string, Held>();
const heldSince = new Map<string, number>();
const closedAt = new Map<string, number>();

/** For tests: counts LevelDB opens and closes by path (a reused handle opens nothing). */
export const dbCounters = { opens: new Map<string, number>(), closes: new Map<string, number>() };

/**
 * Run `work` on the database at `path`. Contract: operations on one path are
 * serialised within this process (LevelDB would refuse our own second open);
 * the handle is reused by an operation queued behind, and kept `lingerMs` after
 * the last one (closed by an unref'd timer: an idle process, a TUI left for an
 * hour, holds no lock; one that exits holds nothing either, and LevelDB wrote
 * every batch to its log before the batch resolved, so exiting or `kill -9`
 * with the handle open loses nothing). Across processes a locked database is
 * retried with jittered backoff until `busyTimeoutMs`, then StoreBusyError —
 * the lock error never escapes. Any other failure of LevelDB or the file system
 * (read-only or full disk, a damaged database, a file in a directory's place)
 * becomes a StoreError naming `path`; `action` says what the caller was doing.
 * Errors `work` throws on purpose (busy or unknown session) pass through. Any
 * failure closes the handle: the next operation opens afresh, never a wedged one.
 */
export function withDb<T>(
  path: string,
  options: { create: boolean; busyTimeoutMs: number; action: "read" | "write"; lingerMs?: number },
  work: (db: Db) => Promise<T>,
): Promise<T> {
  return serialise(path, async () => {
    let handle = held.get(path);
    try {
      if (handle) {
        clearTimeout(handle.timer);
        handle.timer = undefined;
      } else {
        checkNoFileInTheWay(path);
        handle = await open(path, options.create, Date.now() + options.busyTimeoutMs);
      }
      const result = await work(handle.db);
      await afterWork(path, handle, options.lingerMs ?? 0);
      return result;
    } catch (error) {
      // A close that fails after a failed write adds nothing to report.
      if (handle) await close(path, handle).catch(() => {});
      throw storeError(options.action, path, error);
    }
  });
}

/** Run `work` on `path` with no handle of this process open on it (removing the database). */
export function withoutDb<T>(path: string, work: () => Promise<T>): Promise<T> {
  return serialise(path, async () => {
    const handle = held.get(path);
    if (handle) await close(path, handle).catch(() => {});
    return work();
  });
}

/** Close every database this process keeps open (those under `root` if given), once the operations queued on it have run. */
export async function closeDatabases(root?: string): Promise<void> {
  const paths = [...held.keys()].filter((path) => root === undefined || path.startsWith(root + sep));
  await Promise.all(paths.map((path) => withoutDb(path, async () => {})));
}

async function open(path: string, create: boolean, deadline: number): Promise<Held> {
  const since = heldSince.get(path);
  const last = closedAt.get(path);
  // Closed less than COOL_MS ago: a waiter may not have had its turn, so the hold goes on.
  const continues = since !== undefined && last !== undefined && Date.now() - last < COOL_MS;
  const fresh = !continues || Date.now() - since >= MAX_HOLD_MS;
  // Held too long: leave the gap a waiting process needs first.
  if (continues && fresh) await sleep(last + COOL_MS - Date.now());
  const db = await openDb(path, create, deadline);
  count(dbCounters.opens, path);
  if (fresh) heldSince.set(path, Date.now());
  const handle: Held = { db };
  held.set(path, handle);
  return handle;
}

/**
 * After a successful operation: keep the handle for the next one, or close it.
 * A close that fails after a successful operation adds nothing to report (as before).
 */
async function afterWork(path: string, handle: Held, lingerMs: number): Promise<void> {
  const queuedBehind = queues.get(path) !== current.get(path);
  const keep = Date.now() - (heldSince.get(path) ?? 0) < MAX_HOLD_MS && (queuedBehind || lingerMs > 0);
  if (!keep) return close(path, handle).catch(() => {});
  if (queuedBehind) return;
  handle.timer = setTimeout(() => {
    // Through the queue, so the close never runs under an operation; skipped if one reused the handle since.
    void serialise(path, async () => {
      if (held.get(path) === handle && handle.timer === timer) await close(path, handle).catch(() => {});
    });
  }, lingerMs);
  const timer = handle.timer;
  timer.unref();
}

async function close(path: string, handle: Held): Promise<void> {
  clearTimeout(handle.timer);
  handle.timer = undefined;
  if (held.get(path) === handle) held.delete(path);
  try {
    await handle.db.close();
  } finally {
    count(dbCounters.closes, path);
    closedAt.set(path, Date.now());
  }
}

function count(counter: Map<string, number>, path: string): void {
  counter.set(path, (counter.get(path) ?? 0) + 1);
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
  // An existing database opens without `createIfMissing`: with it, classic-level first makes the directory
  // (a step of its own on the thread pool) and starts LevelDB's open only from that step's callback, which
  // waits while the main thread is busy (a run loads the SDK meanwhile: the index's open took 22 ms instead
  // of ~5; docs/performance.md, "Ninth pass"). Removed since the check: opened as before, with create.
  let existing = create && existsSync(join(path, "CURRENT"));
  for (let attempt = 0; ; attempt++) {
    // maxFileSize: LevelDB's minimum (1 MB) bounds what one tail compaction rewrites.
    const db: Db = new Level<string, unknown>(path, { valueEncoding: "json", maxFileSize: 1 << 20 });
    try {
      await db.open({ createIfMissing: create && !existing });
      return db;
    } catch (error) {
      if (existing && !isLocked(error)) {
        existing = false;
        continue;
      }
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
