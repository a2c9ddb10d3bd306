import type { EventDraft, KeenEvent } from "../../protocol/events.js";
import { createSessionView, reduce, type LocalAction, type SessionView } from "../../app/tui/state.js";

let ts = 1_700_000_000_000;

/** A draft stamped as the bus would (fixed session id, increasing ts). */
export function stamp(d: EventDraft, extra: Partial<KeenEvent> = {}): KeenEvent {
  return { ...d, conversation_id: "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee", ts: ts++, ...extra } as KeenEvent;
}

/** A fresh view with every event applied in order. */
export function viewOf(events: (EventDraft | LocalAction)[], extra: Partial<KeenEvent> = {}): SessionView {
  const view = createSessionView({ cwd: "/work/proj", model: "anthropic/claude-test", permissionMode: "ask" });
  for (const e of events) reduce(view, e.kind.startsWith("local-") ? (e as LocalAction) : stamp(e as EventDraft, extra));
  return view;
}

/** Lines without SGR codes, trailing spaces trimmed: what a snapshot compares. */
export function plain(lines: string[]): string[] {
  return lines.map((l) => l.replace(/\x1b\[[0-9;]*m/g, "").trimEnd());
}
