import type { McpCapabilities, McpServer } from "@agentclientprotocol/sdk";

/*
 * The one place ACP mode meets MCP. Keen has no MCP client yet, so `initialize`
 * advertises no MCP capability (stdio servers are the ACP baseline; `http`/`sse`
 * are opt-in) and the servers a client names in session/new, load or resume are
 * only logged. To wire MCP in: advertise what the client supports here, and turn
 * `servers` into the session's MCP configuration in `mcpServersFor` (the host
 * takes it on to the session's setup).
 */

/** What `initialize` says about MCP; undefined: nothing beyond what every agent must accept. */
export const MCP_CAPABILITIES: McpCapabilities | undefined = undefined;

/** The client's MCP servers for one session, as Keen will start them; none for now, and the log says so. */
export function mcpServersFor(servers: McpServer[] | undefined, log: (line: string) => void): [] {
  if (servers?.length) log(`MCP servers are not supported yet; ignoring ${servers.map((s) => s.name).join(", ")}`);
  return [];
}
