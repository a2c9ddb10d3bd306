import assert from "node:assert/strict";
import type { Message } from "../../protocol/messages.js";
import type { Provider, ProviderEvent, ProviderRequest } from "../../protocol/provider.js";

export const READ_TOOL = { name: "read", description: "Read a file", inputSchema: { type: "object", properties: { path: { type: "string" } } } };
export const user = (text: string): Message => ({ role: "user", content: [{ type: "text", text }] });

/** A one-message request with the read tool; `extra` overrides any field. */
export function request(extra: Partial<ProviderRequest> = {}): ProviderRequest {
  return { system: "You are Keen.", messages: [user("hi")], tools: [READ_TOOL], sessionId: "s1", ...extra };
}

/** Collects a whole stream and checks the contract: exactly one terminal event, last. */
export async function collect(p: Provider, req: ProviderRequest, signal = new AbortController().signal): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const e of p.stream(req, signal)) events.push(e);
  const terminal = events.filter((e) => e.type === "done" || e.type === "error");
  assert.equal(terminal.length, 1, JSON.stringify(events));
  assert.equal(terminal[0], events[events.length - 1]);
  return events;
}

export const last = (events: ProviderEvent[]) => events[events.length - 1]!;

/** The stream's `done` event (asserting it ended with one). */
export function done(events: ProviderEvent[]) {
  const e = last(events);
  assert.equal(e.type, "done", JSON.stringify(e));
  return e as Extract<ProviderEvent, { type: "done" }>;
}

/** The stream's failure (asserting it ended with an error). */
export function failure(events: ProviderEvent[]) {
  const e = last(events);
  assert.equal(e.type, "error", JSON.stringify(e));
  return (e as Extract<ProviderEvent, { type: "error" }>).failure;
}
