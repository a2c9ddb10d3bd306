import { after, test } from "node:test";
import assert from "node:assert/strict";
import { methods, type SessionNotification } from "@agentclientprotocol/sdk";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { sharedAcp, updateKinds } from "./acp-client.js";

const server = useMockLLMServer();
const plan = [
  { content: "Read the code", status: "completed", priority: "high" },
  { content: "Write the fix", status: "in_progress" },
];
const acpEntries = [
  { content: "Read the code", status: "completed", priority: "high" },
  { content: "Write the fix", status: "in_progress", priority: "medium" },
];
// Both tests in one `keen acp` (a process costs ~0.7 s of CPU to start), each in a session of its own;
// updates are told apart by session id. The last test checks that it exits 0 on EOF.
const acp1 = sharedAcp(() => server.url, ["--model", "anthropic/claude-test"]);
after(acp1.kill);
const plans = (updates: SessionNotification[], sessionId: string) =>
  updates.filter((n) => n.sessionId === sessionId).map((n) => n.update).filter((u) => u.sessionUpdate === "plan");

test("ACP: todo_write in ask mode runs unasked and sends a plan update; session/load sends it again", async () => {
  const { sb, acp, ctx } = await acp1.get();
  server.enqueue({ toolCalls: [{ name: "todo_write", input: { todos: plan } }] }, { text: "Planned." });
  const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: sb.workspace, mcpServers: [] });
  const reply = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "plan it" }] });
  assert.equal(reply.stopReason, "end_turn");
  assert.deepEqual(acp.permissions, [], "no permission asked");
  const live = acp.updates.filter((n) => n.sessionId === sessionId);
  assert.deepEqual(updateKinds(live).slice(1), ["tool_call", "tool_call_update:in_progress", "tool_call_update:completed", "plan", "agent_message_chunk"]);
  assert.deepEqual(plans(acp.updates, sessionId), [{ sessionUpdate: "plan", entries: acpEntries }]);
});

test("ACP: session/load of a session with a plan sends its plan updates in the replay", async () => {
  const { sb, acp, ctx } = await acp1.get();
  server.enqueue({ toolCalls: [{ name: "todo_write", input: { todos: plan } }] }, { text: "Planned." });
  // keen run's main() in this process makes the session (a Keen start less); the editor's side is the real process.
  const run = await sb.main(["run", "--model", "anthropic/claude-test", "--format", "json", "--no-stdin", "--sandbox", "off", "plan it"]);
  assert.equal(run.code, 0, run.stderr);
  const sessionId = JSON.parse(run.stdout).session_id as string;
  await ctx.request(methods.agent.session.load, { sessionId, cwd: sb.workspace, mcpServers: [] });
  assert.deepEqual(plans(acp.updates, sessionId), [{ sessionUpdate: "plan", entries: acpEntries }]);
  await acp1.endsCleanly();
});
