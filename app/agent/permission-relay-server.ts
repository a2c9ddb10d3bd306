/**
 * The permission relay's MCP stdio server (bundled as dist/permission-relay.cjs).
 * claude spawns it from the `--mcp-config` Keen passes and calls its one tool
 * for every permission ask (`--permission-prompt-tool mcp__keen__approve`);
 * it forwards the ask over the unix socket in KEEN_RELAY_SOCKET to the Keen
 * process that owns the session, and returns Keen's answer as the tool's text.
 * Any failure to reach Keen is a denial, never an approval.
 */
import { createConnection } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import * as z from "zod";
import { RELAY_SERVER, RELAY_TOOL, type RelayAnswer, type RelayAsk } from "./permission-relay-wire.js";

function forward(socket: string, ask: RelayAsk): Promise<RelayAnswer> {
  return new Promise((resolve) => {
    const deny = (why: string) => resolve({ behavior: "deny", message: `Keen could not be asked (${why}); not executed.` });
    const connection = createConnection(socket);
    let reply = "";
    connection.setEncoding("utf8");
    connection.on("connect", () => connection.write(JSON.stringify(ask) + "\n"));
    connection.on("data", (chunk: string) => (reply += chunk));
    connection.on("error", (error) => deny(error.message));
    connection.on("close", () => {
      try {
        resolve(JSON.parse(reply) as RelayAnswer);
      } catch {
        deny("no answer");
      }
    });
  });
}

const socket = process.env.KEEN_RELAY_SOCKET;
const server = new McpServer({ name: RELAY_SERVER, version: "1" });
server.registerTool(
  RELAY_TOOL,
  {
    description: "Asks the Keen user whether a tool call may run.",
    inputSchema: { tool_name: z.string(), input: z.record(z.string(), z.unknown()), tool_use_id: z.string().optional() },
  },
  async (args) => {
    const answer = socket ? await forward(socket, args) : ({ behavior: "deny", message: "KEEN_RELAY_SOCKET is not set; not executed." } as const);
    return { content: [{ type: "text", text: JSON.stringify(answer) }] };
  },
);
// No top-level await: the bundle is CommonJS.
void server.connect(new StdioServerTransport());
