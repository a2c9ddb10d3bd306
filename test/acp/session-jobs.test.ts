import { test } from "node:test";
import assert from "node:assert/strict";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import type { EventDraft } from "../../protocol/events.js";
import { createAcpSession } from "../../app/acp/session.js";
import { FakeEngine } from "../fakes/fake-engine.js";

/* An ACP session over a scripted engine: what a client is sent of background jobs. */

function job(id: string, state: "running" | "exited" | "killed", exit_code: number | null = null): EventDraft {
  return { kind: "job", job_id: id, command: `serve ${id}`, state, pid: 7, exit_code, started_at: 1, ...(state === "running" ? {} : { ended_at: 2 }) } as EventDraft;
}

test("ACP: a job stays in progress across the turn's end (which fails only the turn's own open calls) and completes when it is killed later", async () => {
  const engine = new FakeEngine();
  const sent: SessionUpdate[] = [];
  const session = createAcpSession({
    hosted: { client: engine, id: "s1", cwd: "/w", model: "anthropic/claude-test", mode: "ask", offers: { compact: true, undo: true }, close: async () => {} },
    notify: async (update) => void sent.push(update),
    askPermission: async () => undefined,
    log: () => {},
  });
  const updates = () => sent.map((u) => [u.sessionUpdate, "toolCallId" in u ? u.toolCallId : "", "status" in u ? u.status : ""]);
  engine.emit({ kind: "tool-use", role: "assistant", tool_name: "bash", tool_call_id: "c1", input: "{}" });
  engine.emit(job("job-1", "running"));
  engine.emit({ kind: "tool-result", role: "assistant", tool_name: "bash", tool_call_id: "c1", result: "Started job-1", is_error: false });
  engine.emit({ kind: "tool-use", role: "assistant", tool_name: "read_file", tool_call_id: "c2", input: "{}" });
  engine.emit({ kind: "result", status: "interrupted", text: "", errors: [], usage: {}, num_turns: 1, duration_ms: 1 } as never);
  engine.emit(job("job-1", "killed"));
  // A job whose start this client never saw (it started before the session was bound) comes whole.
  engine.emit(job("job-2", "exited", 3));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(updates(), [
    ["tool_call", "c1", "pending"],
    ["tool_call", "job:job-1", "in_progress"],
    ["tool_call_update", "c1", "completed"],
    ["tool_call", "c2", "pending"],
    ["tool_call_update", "c2", "failed"],
    ["tool_call_update", "job:job-1", "completed"],
    ["tool_call", "job:job-2", "failed"],
  ]);
  await session.close();
});
