import type { Command } from "./commands.js";
import type { KeenEvent } from "./events.js";
import type { ResponseTo } from "./responses.js";

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

/** A command as `request` takes it: any command without its id (the id is the helper's). */
export type Request = Command extends infer C ? (C extends Command ? Omit<C, "id"> : never) : never;

let sequence = 0;

/**
 * Sends a command with a fresh id and resolves with its `response`, typed by
 * the command's kind (`data` when `ok`, `error_code` when not). It listens
 * only until that response comes; subscribers attached before it see the
 * response (and everything before it) first. Never rejects: an engine answers
 * every command, also when it is shutting down.
 */
export function request<C extends Request>(client: EngineClient, command: C): Promise<ResponseTo<C["kind"]>> {
  const id = `req-${++sequence}`;
  return new Promise((resolve) => {
    const off = client.subscribe((event) => {
      if (event.kind !== "response" || event.id !== id) return;
      off();
      resolve(event as ResponseTo<C["kind"]>);
    });
    client.send({ ...command, id } as Command);
  });
}
