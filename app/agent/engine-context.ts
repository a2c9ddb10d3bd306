import type { CommandId, PermissionMode } from "../../protocol/commands.js";
import type { EventDraft, KeenEvent } from "../../protocol/events.js";
import type { ErrorCode } from "../../protocol/responses.js";
import type { SessionStore } from "../../storage/store.js";
import type { CurrentSession, LoadedSession } from "./engine-session.js";
import type { EngineOptions, EngineSetup } from "./engine-types.js";
import type { PermissionGate } from "./permission-gate.js";

/*
 * What the engine's command handlers (held-commands.ts, session-commands.ts, setting-commands.ts) and its
 * turn (engine-turn.ts) see of it: not the engine, only this. The engine (engine.ts) keeps the dispatch,
 * its state (queue, running turn, recorder, session lock) and each turn's lifecycle.
 */

/** A command as a response names it. */
export type CommandRef = { kind: string; id?: CommandId };

/** Work that holds the idle session like a turn (see `holdSession`). */
export type HeldWork = (prepared: EngineSetup, loaded: LoadedSession, signal: AbortSignal) => Promise<void>;

/**
 * The engine as a command handler sees it. Contract: `emit` stores before it prints (storage first), so
 * a handler awaits each emit, `respond` and `refuse` in the order the engine itself would.
 */
export interface EngineContext {
  readonly store: SessionStore;
  readonly options: Pick<EngineOptions, "newId" | "retry" | "checkModel" | "listModels" | "modeCeiling" | "headless" | "interactive">;
  readonly gate: PermissionGate;
  /** The session commands act on now. */
  readonly session: CurrentSession;
  /** Makes `next` the session commands act on (new-session, resume-session, fork-session). */
  switchSession(next: CurrentSession): void;
  /** Shows a stored event again (a resumed session's history): printed, not stored again. */
  replay(event: KeenEvent): Promise<void>;
  emit(draft: EventDraft): Promise<void>;
  respond(command: CommandRef, ok: boolean, extra?: { error?: string; error_code?: ErrorCode; data?: unknown }): Promise<void>;
  /** A failed answer: the text for people, the code for programs (protocol/responses.ts). */
  refuse(command: CommandRef, code: ErrorCode, error: string, data?: unknown): Promise<void>;
  /** A refusal for a thrown error: its code (else `fallback`, else `failed`) and message. */
  refuseError(command: CommandRef, error: unknown, fallback?: ErrorCode): Promise<void>;
  /** A turn is starting, running or waiting, or other work holds the session: nothing may switch or rewrite it now. */
  active(): boolean;
  /** The session's setup (prepared once per session and model). */
  setupFor(current: CurrentSession): Promise<EngineSetup>;
  /** The setup being prepared or prepared for `current`, without preparing one. */
  peekSetup(current: CurrentSession): Promise<EngineSetup> | undefined;
  /** The setup prepared last (whichever session): background jobs belong to the engine, not to one session. */
  latestSetup(): EngineSetup | undefined;
  /** The user chose this permission mode: it holds across sessions in this process. */
  chooseMode(mode: PermissionMode): void;
  /**
   * Runs `body` with the idle session held like a turn: prompts wait for it, the session is claimed
   * (created when new, titled by `label`), what `body` emits is stored, and the session is released
   * with the status its last turn left. `admit` may refuse (answering its command) before anything is claimed.
   */
  holdSession(current: CurrentSession, label: string, admit: (prepared: EngineSetup) => Promise<boolean>, body: HeldWork): Promise<void>;
  /** Waits until what was emitted while the session is held is stored (nothing to wait for otherwise). */
  flush(): Promise<void> | undefined;
}
