/**
 * Resume benchmark, in-process: a session of 10,000 stored events built
 * through the public store API (one append per turn, as a run's recorder
 * would), then timed: open the store, resolve the id, load the events, project
 * the conversation. The floor reads the same events from a JSON-lines file.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KeenEvent } from "../../protocol/events.js";
import { newSessionId } from "../../storage/ids.js";
import { openStore } from "../../storage/level-store.js";
import { projectConversation } from "../../storage/projection.js";

/** Events per stored turn (see `turnEvents`). */
export const EVENTS_PER_TURN = 10;

/** A stored session to resume. */
export interface BuiltSession {
  dataDir: string;
  id: string;
  events: number;
  /** The same events as JSON lines, for the floor. */
  jsonlPath: string;
  buildMs: number;
}

/** One realistic turn: prompt, a tool call with output, and an answer. */
function turnEvents(id: string, n: number): KeenEvent[] {
  const base = { conversation_id: id, ts: Date.now() };
  const turn_id = newSessionId();
  const prompt = `Turn ${n}: look at src/module-${n}.ts and explain what the exported functions do. `.repeat(3);
  const answer = `In turn ${n} the module exports a parser and a printer; the parser is total and the printer escapes. `.repeat(4);
  const input = JSON.stringify({ command: `cat src/module-${n}.ts` });
  const output = `export function parse(s: string) { return s.split(","); } // line ${n}\n`.repeat(20);
  const usage = { input_tokens: 1200, cached_tokens: 800, cache_write_tokens: 0, output_tokens: 150, reasoning_tokens: 0, total_tokens: 1350 };
  return [
    { ...base, kind: "session-start", model: "anthropic/claude-sonnet-5-5", cwd: "/work/project", tools: ["bash", "read_file"], protocol_version: 1, resumed: n > 0 },
    { ...base, kind: "user-message", turn_id, message: { role: "user", content: [{ type: "text", text: prompt }], headless: true } },
    { ...base, kind: "text", role: "user", content: prompt },
    { ...base, kind: "tool-use", role: "assistant", tool_name: "bash", tool_call_id: `toolu_${n}`, input },
    {
      ...base, kind: "assistant-message", turn_id,
      message: { role: "assistant", content: [{ type: "text", text: "Let me look." }, { type: "tool_call", id: `toolu_${n}`, name: "bash", input: JSON.parse(input) }] },
    },
    { ...base, kind: "tool-result", role: "assistant", tool_name: "bash", tool_call_id: `toolu_${n}`, result: output, is_error: false },
    { ...base, kind: "text", role: "assistant", content: answer },
    { ...base, kind: "assistant-message", turn_id, message: { role: "assistant", content: [{ type: "text", text: answer }] } },
    { ...base, kind: "turn-end", turn_id, status: "success", steps: 2 },
    {
      ...base, kind: "result", session_id: id, opencode_session_id: id.replaceAll("-", ""), text: answer, status: "success",
      is_error: false, errors: [], num_turns: 2, duration_ms: 4000, usage,
    },
  ];
}

/** Builds a session of `turns × 10` events in `dataDir`; with `compactEvery`, a compaction's replacement event follows every that many turns. */
export async function buildSession(dataDir: string, turns: number, compactEvery?: number): Promise<BuiltSession> {
  const started = performance.now();
  const store = openStore(dataDir);
  const id = newSessionId();
  const now = Date.now();
  await store.create({ id, title: "resume benchmark", cwd: "/work/project", model: "anthropic/claude-sonnet-5-5", created: now, updated: now, status: "success" });
  const lines: string[] = [];
  for (let n = 0; n < turns; n++) {
    const events = turnEvents(id, n);
    if (compactEvery && (n + 1) % compactEvery === 0) events.push(replacementEvent(id, n));
    await store.append(id, events);
    for (const event of events) lines.push(JSON.stringify(event));
  }
  const jsonlPath = join(dataDir, "floor-events.jsonl");
  writeFileSync(jsonlPath, `${lines.join("\n")}\n`);
  return { dataDir, id, events: lines.length, jsonlPath, buildMs: performance.now() - started };
}

/** A compaction's stored replacement: a summary of about 2 KB, its acknowledgement and the last turn kept. */
function replacementEvent(id: string, n: number): KeenEvent {
  const summary = `[Keen compacted this conversation] Summary up to turn ${n}: the modules parse and print; decisions, paths and commands follow. `.repeat(16);
  return {
    conversation_id: id, ts: Date.now(), kind: "context-replacement", trigger: "auto",
    messages: [
      { role: "user", content: [{ type: "text", text: summary }], headless: true },
      { role: "assistant", content: [{ type: "text", text: "Understood." }] },
    ],
  };
}

/** A resume of a compacted session as the engine does it: open, resolve, read from the last compaction, project. Returns ms and events read. */
export async function timeCompactedResume(session: BuiltSession): Promise<{ ms: number; read: number }> {
  const started = performance.now();
  const store = openStore(session.dataDir);
  const meta = await store.resolve(session.id.slice(0, 8));
  const recent = await store.loadRecent(meta.id);
  const conversation = projectConversation(recent.events);
  const ms = performance.now() - started;
  if (recent.offset === 0 || conversation.length < 2) throw new Error(`compacted resume read from ${recent.offset}: ${conversation.length} messages`);
  return { ms, read: recent.events.length };
}

/** One resume as `keen run --session` does it before the turn: open, resolve, load, project. Returns ms. */
export async function timeResume(session: BuiltSession): Promise<number> {
  const started = performance.now();
  const store = openStore(session.dataDir);
  const meta = await store.resolve(session.id.slice(0, 8));
  const events = await store.load(meta.id);
  const conversation = projectConversation(events);
  const elapsed = performance.now() - started;
  if (events.length !== session.events || conversation.length !== (2 * session.events) / EVENTS_PER_TURN) {
    throw new Error(`resume read ${events.length} events / ${conversation.length} messages`);
  }
  return elapsed;
}

/** The floor: the same events from one JSON-lines file (read, split, parse). Returns ms. */
export function timeFloorRead(session: BuiltSession): number {
  const started = performance.now();
  const events = readFileSync(session.jsonlPath, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as unknown);
  const elapsed = performance.now() - started;
  if (events.length !== session.events) throw new Error(`floor read ${events.length} events`);
  return elapsed;
}
