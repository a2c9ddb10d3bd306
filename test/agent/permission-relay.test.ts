import { test } from "node:test";
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { createConnection } from "node:net";
import { dirname } from "node:path";
import { startPermissionRelay } from "../../app/agent/permission-relay.js";
import type { PermissionRequest } from "../../app/permissions/requester.js";

function ask(socket: string, line: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const connection = createConnection(socket, () => connection.write(line + "\n"));
    let reply = "";
    connection.setEncoding("utf8").on("data", (d: string) => (reply += d));
    connection.on("error", reject).on("close", () => resolve(JSON.parse(reply)));
  });
}

test("the relay: a private socket; each ask goes to the requester and comes back in the CLI's format; bad lines are denials", async () => {
  const seen: PermissionRequest[] = [];
  const order: string[] = [];
  const relay = await startPermissionRelay({
    serverPath: "/unused", signal: new AbortController().signal,
    requester: { request: async (req) => (seen.push(req), order.push("ask"), req.tool === "Bash" ? { allow: true } : { allow: false, reason: "no writes" }) },
    before: async () => void order.push("before"),
    after: async (_, allow) => void order.push(`after:${allow}`),
  });
  const config = JSON.parse(relay.args[relay.args.indexOf("--mcp-config") + 1]!);
  const socket: string = config.mcpServers.keen.env.KEEN_RELAY_SOCKET;
  assert.equal(statSync(socket).mode & 0o777, 0o600);
  assert.equal(statSync(dirname(socket)).mode & 0o777, 0o700);
  assert.deepEqual(relay.args.slice(2), ["--permission-prompt-tool", "mcp__keen__approve"]);

  assert.deepEqual(await ask(socket, JSON.stringify({ tool_name: "Bash", input: { command: "ls" }, tool_use_id: "t1" })), {
    behavior: "allow", updatedInput: { command: "ls" },
  });
  assert.deepEqual(await ask(socket, JSON.stringify({ tool_name: "Write", input: { file_path: "x" } })), { behavior: "deny", message: "no writes" });
  assert.deepEqual(await ask(socket, "{not json"), { behavior: "deny", message: "Keen could not read this permission request." });
  assert.deepEqual(seen.map((r) => [r.tool, r.callId]), [["Bash", "t1"], ["Write", undefined]]);
  assert.deepEqual(order, ["before", "ask", "after:true", "before", "ask", "after:false"]);
  await relay.close();
  assert.throws(() => statSync(dirname(socket)), /ENOENT/);
});
