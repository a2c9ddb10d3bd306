import { test } from "node:test";
import assert from "node:assert/strict";
import { fenced, jobUpdate, permissionToolCall, promptImages, promptText, replayUpdates, stopReasonOf, toolCallFinished, toolView, UnsupportedContentError } from "../../app/acp/updates.js";

const base = { conversation_id: "s", ts: 0, role: "assistant" as const };

test("stop reasons: cancel wins, refusal and max_tokens pass through, the step limit is max_turn_requests, a failure is an error", () => {
  const result = (status: "success" | "error" | "interrupted" | "max_turns", stop_reason?: string) => ({ status, stop_reason, errors: ["boom"] });
  assert.equal(stopReasonOf(result("success", "end_turn"), false), "end_turn");
  assert.equal(stopReasonOf(result("success", "max_tokens"), false), "max_tokens");
  assert.equal(stopReasonOf(result("success", "refusal"), false), "refusal");
  assert.equal(stopReasonOf(result("max_turns", "end_turn"), false), "max_turn_requests");
  assert.equal(stopReasonOf(result("interrupted"), false), "cancelled");
  assert.equal(stopReasonOf(result("error"), true), "cancelled", "an abort the client asked for is never an error");
  assert.deepEqual(stopReasonOf(result("error"), false), { error: "boom" });
  assert.deepEqual(stopReasonOf(undefined, false), { error: "the turn ended without a result" });
});

test("tool views: the call's own title, kind and locations, in ACP's kinds; a call that says nothing is `other` under its name", () => {
  const at = [{ path: "/w/src/a.ts", line: 10 }];
  assert.deepEqual(toolView({ tool_name: "x", tool_kind: "read", title: "Read src/a.ts", locations: at }), { title: "Read src/a.ts", kind: "read", locations: at });
  assert.deepEqual(toolView({ tool_name: "x", tool_kind: "exec", title: "npm test\nnpm run lint" }), { title: "npm test…", kind: "execute", locations: [] });
  assert.deepEqual(toolView({ tool_name: "x", tool_kind: "network" }), { title: "x", kind: "fetch", locations: [] });
  assert.deepEqual(toolView({ tool_name: "x", tool_kind: "search" }).kind, "search");
  assert.deepEqual(toolView({ tool_name: "x", tool_kind: "edit" }).kind, "edit");
  assert.deepEqual(toolView({ tool_name: "mcp__s__do" }), { title: "mcp__s__do", kind: "other", locations: [] });
});

test("finished calls: a diff with old and new text, the unified diff when they were too large, errors as text", () => {
  const result = (details: Record<string, unknown>, is_error = false) => ({ ...base, kind: "tool-result" as const, tool_name: "edit_file", tool_call_id: "c", result: "Edited.", is_error, details });
  assert.deepEqual(toolCallFinished(result({ path: "/w/a", diff: "@@", old_text: "a", new_text: "b" })), {
    sessionUpdate: "tool_call_update", toolCallId: "c", status: "completed", content: [{ type: "diff", path: "/w/a", oldText: "a", newText: "b" }],
  });
  assert.deepEqual(toolCallFinished(result({ path: "/w/a", diff: "@@ -1 +1 @@" })), {
    sessionUpdate: "tool_call_update", toolCallId: "c", status: "completed", content: [{ type: "content", content: { type: "text", text: "```diff\n@@ -1 +1 @@\n```" } }],
  });
  assert.deepEqual(toolCallFinished(result({}, true)), {
    sessionUpdate: "tool_call_update", toolCallId: "c", status: "failed", content: [{ type: "content", content: { type: "text", text: "Edited." } }],
  });
});

test("a fence is longer than any backtick run inside", () => {
  assert.equal(fenced("a ``` b"), "````\na ``` b\n````");
  assert.equal(fenced("plain\n"), "```\nplain\n```");
});

test("replay: prompts, answers, thinking and tool calls are shown; memory and errors are not", () => {
  assert.deepEqual(replayUpdates({ ...base, kind: "text", role: "user", content: "hi" }), [{ sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi" } }]);
  assert.deepEqual(replayUpdates({ ...base, kind: "thinking", content: "hm" }), [{ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hm" } }]);
  assert.deepEqual(replayUpdates({ ...base, kind: "memory", content: "secret plan" }), []);
  assert.deepEqual(replayUpdates({ conversation_id: "s", ts: 0, kind: "error", message: "x" }), []);
});

test("prompt text: links and embedded text resources inline; images are refused", () => {
  assert.equal(promptText([{ type: "text", text: "see" }, { type: "resource_link", name: "a b.ts", uri: "file:///w/a%20b.ts" }]), "see\n\n[a b.ts](/w/a b.ts)");
  // Images go with the prompt command's `images`, not into its text.
  assert.equal(promptText([{ type: "text", text: "see" }, { type: "image", data: "AAAA", mimeType: "image/png" }]), "see");
  assert.deepEqual(promptImages([{ type: "text", text: "see" }, { type: "image", data: "AAAA", mimeType: "image/png" }]), [{ data: "AAAA", media_type: "image/png" }]);
  assert.throws(() => promptText([{ type: "audio", data: "", mimeType: "audio/wav" }]), UnsupportedContentError);
  assert.throws(() => promptText([{ type: "resource", resource: { uri: "file:///x.bin", blob: "AAAA" } }]), /binary resource/);
});

test("permission previews: a diff item when the old and new text came along, the unified diff as text when only it did, nothing for bash", () => {
  const ask = (extra: Record<string, unknown>) => ({
    ...base, kind: "permission-request" as const, request_id: "r", tool_name: "write_file", tool_call_id: "c", input: JSON.stringify({ path: "a" }), ...extra,
  });
  assert.deepEqual(permissionToolCall(ask({ path: "/w/a", diff: "@@", old_text: null, new_text: "x\n" })).content, [{ type: "diff", path: "/w/a", oldText: null, newText: "x\n" }]);
  assert.deepEqual(permissionToolCall(ask({ path: "/w/a", diff: "@@ -1 +1 @@" })).content, [{ type: "content", content: { type: "text", text: "```diff\n@@ -1 +1 @@\n```" } }]);
  assert.equal(permissionToolCall({ ...ask({}), tool_name: "bash", input: "{}" }).content, undefined);
});

test("a background job is an execute tool call of its own: in progress while it runs, completed when killed or exiting 0, failed on another exit; never replayed", () => {
  const job = (state: "running" | "exited" | "killed", exit_code: number | null = null) =>
    ({ conversation_id: "s", ts: 0, kind: "job" as const, job_id: "job-2", command: "npm run dev -- --port 5173", state, pid: 4242, exit_code, started_at: 1, ...(state === "running" ? {} : { ended_at: 2 }) });
  const started = jobUpdate(job("running"), false);
  assert.deepEqual(started, {
    sessionUpdate: "tool_call", toolCallId: "job:job-2", status: "in_progress", title: "npm run dev -- --port 5173 (background job-2)", kind: "execute",
    rawInput: { command: "npm run dev -- --port 5173", background: true },
    content: [{ type: "content", content: { type: "text", text: "job-2 (pid 4242) runs in the background; the model reads its output with job_output." } }],
  });
  const end = (state: "exited" | "killed", code: number | null) => {
    const update = jobUpdate(job(state, code), true) as { sessionUpdate: string; status: string; content: { content: { text: string } }[] };
    return [update.sessionUpdate, update.status, update.content[0]!.content.text];
  };
  assert.deepEqual(end("killed", null), ["tool_call_update", "completed", "job-2 was killed."]);
  assert.deepEqual(end("exited", 0), ["tool_call_update", "completed", "job-2 exited with code 0."]);
  assert.deepEqual(end("exited", 2), ["tool_call_update", "failed", "job-2 exited with code 2."]);
  // A client that never heard of the job gets it whole, already ended.
  const unseen = jobUpdate(job("exited", 1), false);
  assert.deepEqual([unseen.sessionUpdate, "status" in unseen && unseen.status, "title" in unseen && unseen.title], ["tool_call", "failed", "npm run dev -- --port 5173 (background job-2)"]);
  assert.deepEqual(replayUpdates(job("running")), []);
  // test/e2e/acp-contract.test.ts checks the updates the real process sends against the ACP SDK's schema.
});
