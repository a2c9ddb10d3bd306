import { request } from "../../protocol/client.js";
import type { KeenEvent } from "../../protocol/events.js";
import type { RunResult } from "../../protocol/result.js";
import type { SessionEngine } from "./engine.js";

/**
 * The seed's run API (seed 003: `run`, `queueMessage`, `abort`, `isActive`,
 * `isStreaming`, `waitForEnd`) for callers that want it, over one session
 * engine. It owns no run state: the engine keeps the queue, the abort and
 * whether a turn runs, whichever backend (Keen's loop or the CLI runner) runs
 * it; `isStreaming` is read from the engine's own events. A `sessionId` other
 * than the engine's current session is never active.
 */
export interface RunFacade {
  /** Runs one prompt as the session's next turn; resolves with its `result`, rejects when the engine refuses it. */
  run(sessionId: string, text: string): Promise<RunResult>;
  /** Queues a prompt behind the running turn (Keen runs it as the next turn); false when nothing runs. */
  queueMessage(sessionId: string, text: string): boolean;
  /** Interrupts the running turn (queued prompts are dropped); false when nothing runs. */
  abort(sessionId: string): boolean;
  /** A turn runs or prompts wait for one. */
  isActive(sessionId: string): boolean;
  /** The model's output is streaming (a text or thinking block is open). */
  isStreaming(sessionId: string): boolean;
  /** Resolves true once the session is idle, false after `timeoutMs` (default: no limit). */
  waitForEnd(sessionId: string, timeoutMs?: number): Promise<boolean>;
}

const STREAM_OPEN = new Set(["text-delta", "thinking-start", "thinking-delta"]);

/**
 * The run API over `engine`: an entry point for programs that embed Keen's
 * engine in-process (docs/stdio.md, "In-process: the run API"). Keen's own
 * front ends speak commands and events instead and never load this module.
 */
export function createRunFacade(engine: SessionEngine): RunFacade {
  let streaming = false;
  engine.subscribe((event) => {
    if (STREAM_OPEN.has(event.kind)) streaming = true;
    else if (!event.kind.endsWith("-delta")) streaming = false;
  });
  const current = (sessionId: string) => engine.sessionId === sessionId;
  const active = (sessionId: string) => current(sessionId) && engine.busy;

  return {
    run(sessionId, text) {
      if (!current(sessionId)) return Promise.reject(new Error(`session ${sessionId} is not this engine's current session`));
      let result: RunResult | undefined;
      const off = engine.subscribe((event: KeenEvent) => {
        if (event.kind === "result" && event.conversation_id === sessionId && !event.replay) {
          const { kind: _kind, conversation_id: _c, ts: _ts, replay: _r, ...rest } = event as typeof event & { seq?: number };
          delete rest.seq;
          result = rest as RunResult;
        }
      });
      return request(engine, { kind: "prompt", text }).then((answer) => {
        off();
        if (answer.ok && result) return result;
        throw new Error(answer.ok ? "the turn ended without a result" : answer.error);
      });
    },
    queueMessage(sessionId, text) {
      if (!active(sessionId)) return false;
      engine.send({ kind: "prompt", text });
      return true;
    },
    abort(sessionId) {
      if (!active(sessionId)) return false;
      engine.send({ kind: "interrupt" });
      return true;
    },
    isActive: active,
    isStreaming: (sessionId) => active(sessionId) && streaming,
    waitForEnd(sessionId, timeoutMs) {
      if (!active(sessionId)) return Promise.resolve(true);
      if (timeoutMs === undefined) return engine.idle().then(() => true);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
      return Promise.race([engine.idle().then(() => true), late]).finally(() => clearTimeout(timer));
    },
  };
}
