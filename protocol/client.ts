import type { Command } from "./commands.js";
import type { KeenEvent } from "./events.js";

/**
 * What a front end holds of a session engine: a way to send commands and a
 * stream of events. The TUI, `keen stdio` and ACP mode see nothing else — no
 * loop, provider or store (STYLE.md, "Front ends are thin clients").
 */
export interface EngineClient {
  /** Queues a command; the engine answers it with a `response` event (echoing `id`). */
  send(command: Command): void;
  /** Receives every event from now on, in order; returns the unsubscribe function. */
  subscribe(listener: (event: KeenEvent) => void | Promise<void>): () => void;
}
