import type { KeenEvent } from "../../protocol/events.js";
import { isReplayed, isStored } from "../../protocol/kinds.js";
import type { Message } from "../../protocol/messages.js";
import { projectConversation, rewoundEvents } from "../../storage/projection.js";
import { CodedError } from "../../protocol/errors.js";
import { SessionBusyError, type SessionMeta, type SessionStore } from "../../storage/store.js";

/** The session an engine is working on. It is in the store from its first turn on (`meta`). */
export interface CurrentSession {
  id: string;
  /** The stored row; undefined until the first turn creates it. */
  meta?: SessionMeta;
  cwd: string;
  /** A model chosen for this session in this process (flag or `set-model`); else the stored one. */
  model?: string;
  /** True once this process has written the session's `session-start`. */
  started: boolean;
  /** How many stored events this process knows of: more in the store means another process continued it. */
  seen: number;
}

/** What a turn starts from after claiming: the conversation so far and events others appended since. */
export interface LoadedSession {
  history: Message[];
  /** Stored events of earlier turns in the current (rewound) history; standing permission rules are read from them. */
  events: KeenEvent[];
  /** Complete events another process appended since this one last looked, to re-emit as history. */
  appended: KeenEvent[];
}

/**
 * Loads a claimed session's stored events: the conversation for the next turn
 * and what others appended since `seen`. Only events from the last compaction
 * on are read (and the permission rules before it), so a long, often
 * compacted session resumes in the time its recent part takes. A session not
 * yet in the store has nothing to load.
 */
export async function loadSession(store: SessionStore, session: CurrentSession): Promise<LoadedSession> {
  if (!session.meta) return { history: [], events: [], appended: [] };
  let recent = await store.loadRecent(session.id);
  // A rewind counts prompts from the session's start, and may go back past the compaction: read it all.
  if (recent.offset > 0 && recent.events.some((e) => e.kind === "rewind" && e.conversation)) {
    recent = { events: await store.load(session.id), offset: 0, rules: [] };
  }
  // Appended events from before another process's compaction are not re-read: they are history for the UI only.
  const from = Math.max(0, session.seen - recent.offset);
  const appended = session.started ? recent.events.slice(from).filter((e) => isReplayed(e.kind)) : [];
  session.seen = recent.offset + recent.events.length;
  // The turn's backend reads context (the user's shell commands, the CLI session) from the current history only.
  return { history: projectConversation(recent.events), events: rewoundEvents([...recent.rules, ...recent.events]), appended };
}

/** The events a resumed session's history replays to a front end: its current history (rewound turns left out). */
export function historyEvents(events: KeenEvent[]): KeenEvent[] {
  return rewoundEvents(events).filter((e) => isReplayed(e.kind));
}

/** Counts events as the store will keep them, so the next turn can tell what others appended. */
export function countStored(session: CurrentSession, event: KeenEvent): void {
  if (isStored(event.kind) && !event.replay) session.seen++;
}

/**
 * Creates (and claims in the same write) or claims the session, and records model and cwd. `redact`
 * hides secrets in the title a new session takes from `text`. Contract: a session another process
 * holds is a coded `session_busy` error.
 */
export async function claimSession(
  store: SessionStore, current: CurrentSession, text: string, modelRef: string, redact?: (text: string) => string,
): Promise<void> {
  if (!current.meta) {
    const now = Date.now();
    const meta = { id: current.id, title: titleOf(redact ? redact(text) : text), cwd: current.cwd, model: modelRef, created: now, updated: now, status: "running" as const };
    await store.create(meta, { claim: true });
    current.meta = meta;
    return;
  }
  try {
    await store.claim(current.id);
  } catch (error) {
    if (error instanceof SessionBusyError) throw new CodedError(error.message, "session_busy");
    throw error;
  }
  await store.updateMeta(current.id, { status: "running", updated: Date.now(), model: modelRef, cwd: current.cwd });
}

/** A session's title: its first prompt's first line, cut to 80 characters. */
export function titleOf(prompt: string): string {
  // Control characters (escape sequences, tabs, a lone CR) never stay in a title: each becomes a space.
  const line = prompt.trim().split("\n")[0]!.replace(/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]+/g, " ").replace(/ {2,}/g, " ").trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
