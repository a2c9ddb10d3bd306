/**
 * ACP with MCP: the servers an editor names in session/new start with that
 * session (through Keen's one MCP client), their tools reach the model as
 * mcp__<server>__<tool>, and they end with the session.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { methods } from "@agentclientprotocol/sdk";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { startAcp } from "./acp-client.js";
import { FAKE_MCP, mcpSandbox } from "./mcp-helpers.js";

const server = useMockLLMServer();

test("session/new starts the editor's MCP servers for that session: the model is offered their tools and a call reaches them", async () => {
  const sb = mcpSandbox(server.url);
  const acp = startAcp(["--model", "anthropic/claude-test", "--permission-mode", "auto"], sb.env, sb.workspace);
  server.enqueue({ toolCalls: [{ id: "m1", name: "mcp__Fake_Tools__echo", input: { text: "from the editor" } }] }, { text: "Echoed." });
  await acp.run(async (ctx) => {
    const { sessionId } = await ctx.request(methods.agent.session.new, {
      cwd: sb.workspace,
      mcpServers: [{ name: "Fake Tools", command: process.execPath, args: [FAKE_MCP], env: [] }],
    });
    const { stopReason } = await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "echo it" }] });
    assert.equal(stopReason, "end_turn");
  });
  assert.equal((await acp.exited).code, 0, acp.stderr());
  const offered = (server.requests[0]!.body.tools as { name: string }[]).map((t) => t.name);
  assert.ok(offered.includes("mcp__Fake_Tools__echo"), offered.join(", "));
  const sent = JSON.stringify(server.requests[1]!.body.messages.at(-1));
  assert.match(sent, /echo: from the editor/);
  const done = acp.updates.find((n) => n.update.sessionUpdate === "tool_call_update" && n.update.status === "completed");
  assert.ok(done, "the MCP call is reported to the editor");
  assert.match(acp.stderr(), /MCP server "Fake Tools" is named Fake_Tools in tool names/);
});
