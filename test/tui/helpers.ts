import type { CallView, EventDraft, KeenEvent } from "../../protocol/events.js";
import type { FileGuard } from "../../app/permissions/guard.js";
import { createSessionView, reduce, type LocalAction, type SessionView } from "../../app/tui/state.js";
import { createTools } from "../../app/tools/index.js";
import { callView } from "../../app/tools/tool.js";

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

// The built-in tools of a session in /work/proj; only their declarations are read (none runs).
const BUILT_IN = createTools({ cwd: "/work/proj", workspace: "/work/proj", guard: {} as FileGuard, env: {} });

/** How a call of the built-in tool `name` describes itself, as the engine's tool-use and permission-request carry it. */
export function viewOfCall(name: string, input: unknown): CallView {
  const tool = BUILT_IN.find((t) => t.definition.name === name);
  if (!tool) throw new Error(`no built-in tool ${name}`);
  return callView(tool, input);
}
