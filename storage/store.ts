import type { KeenEvent } from "../protocol/events.js";

/** Session lifecycle as the index shows it: `running`, or how its last turn ended (the protocol's result statuses). */
export type SessionStatus = "running" | "success" | "error" | "interrupted" | "max_turns";

/** One row of the session index. */
export interface SessionMeta {
  id: string;
  title: string;
  cwd: string;
  /** `<provider>/<model>` */
  model: string;
  created: number;
  updated: number;
  status: SessionStatus;
  /** A fork: the session it was copied from and the prompt it was forked before (app/agent/rewind.ts). */
  parent?: { id: string; at: number };
}

/** Raised when a session is claimed by another live process. */
export class SessionBusyError extends Error {
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} is busy`);
  }
}

/** Raised when an id or prefix matches no session (or several). */
export class UnknownSessionError extends Error {}

/**
 * The store could not be opened, read or written (read-only or full disk, a
 * damaged database, a file where a directory belongs). The message is one line
 * naming the path and the cause; the CLI prints it as is and exits 1.
 */
export class StoreError extends Error {
  override name = "StoreError";
  readonly exitCode = 1;
  constructor(readonly action: "read" | "write", readonly path: string, cause: unknown) {
    super(`cannot ${action} the session store at ${path}: ${describeCause(cause)}`, { cause });
  }
}

function describeCause(cause: unknown): string {
  const e = cause as { code?: string; message?: string; cause?: unknown } | null;
  // level wraps the real failure: "Database failed to open" says nothing by itself.
  if (e?.code === "LEVEL_DATABASE_NOT_OPEN" && e.cause) return describeCause(e.cause);
  const message = String(e?.message ?? cause).split("\n")[0]!;
  if (e?.code === "LEVEL_CORRUPTION" || e?.code === "LEVEL_DECODE_ERROR" || cause instanceof SyntaxError) {
    return `the database is damaged (${message})`;
  }
  return message;
}

/**
 * Session storage. Contract: safe to use from many processes at once; never
 * surfaces LevelDB lock errors; `append` keeps order within a session.
 */
/** A session's events from its last compaction on (see `SessionStore.loadRecent`). */
export interface RecentEvents {
  events: KeenEvent[];
  offset: number;
  rules: KeenEvent[];
}

export interface SessionStore {
  /**
   * Add a session to the index. With `claim`, also claim it for this process in
   * the same write: a new id cannot be held by anyone else, and a run saves a
   * round trip to the index before its first request.
   */
  create(meta: SessionMeta, options?: { claim?: boolean }): Promise<void>;
  /** Claim a session for writing; throws SessionBusyError if a live process holds it. */
  claim(id: string): Promise<void>;
  /** Release the claim and record the final status. */
  release(id: string, status: SessionStatus): Promise<void>;
  append(id: string, events: KeenEvent[]): Promise<void>;
  updateMeta(id: string, patch: Partial<Omit<SessionMeta, "id">>): Promise<void>;
  /** Newest first. */
  list(): Promise<SessionMeta[]>;
  /** Full id or unique prefix → meta; throws UnknownSessionError. */
  resolve(idOrPrefix: string): Promise<SessionMeta>;
  load(id: string): Promise<KeenEvent[]>;
  /**
   * What the next request needs, not the whole history: the events from the
   * session's last `context-replacement` on (all of them when it has none),
   * `offset` the index of the first, and the standing `permission-rule`
   * events stored before it.
   */
  loadRecent(id: string): Promise<RecentEvents>;
  remove(id: string): Promise<void>;
  /**
   * Close what the store keeps open between operations (a session's database
   * lingers briefly after a write, see level-db.ts); the next operation opens
   * it again. For the end of a session: an exiting process needs no close.
   */
  close(): Promise<void>;
}
