import type { McpCapabilities, McpServer } from "@agentclientprotocol/sdk";
import type { McpServerConfig } from "../mcp/config.js";

/*
 * The one place ACP mode meets MCP. The servers a client names in session/new,
 * load or resume become that session's MCP servers (source "client": trusted
 * like a --mcp-config file, since the user configured them in the editor) and
 * start with its engine, through the same MCP client every front end uses.
 */

/** stdio is every agent's baseline; Keen also speaks Streamable HTTP and legacy SSE. */
export const MCP_CAPABILITIES: McpCapabilities = { http: true, sse: true };

/** Servers by Keen's name for them, in the shapes of Keen's MCP config. */
export type SessionMcpServers = Record<string, McpServerConfig>;

/**
 * The client's MCP servers for one session. ACP names are human-readable and
 * Keen's become part of tool names (`mcp__<server>__<tool>`), so a name is cut
 * to the providers' alphabet and made unique; the log says when it changed.
 */
export function mcpServersFor(servers: McpServer[] | undefined, log: (line: string) => void): SessionMcpServers | undefined {
  if (!servers?.length) return undefined;
  const out: SessionMcpServers = {};
  for (const server of servers) {
    const name = uniqueName(server.name, out);
    if (name !== server.name) log(`MCP server "${server.name}" is named ${name} in tool names`);
    const pairs = (list: { name: string; value: string }[] | undefined) => Object.fromEntries((list ?? []).map((p) => [p.name, p.value]));
    out[name] = "type" in server && (server.type === "http" || server.type === "sse")
      ? { type: server.type, url: server.url, headers: pairs(server.headers) }
      : { command: server.command, args: server.args ?? [], env: pairs(server.env) };
  }
  return out;
}

function uniqueName(name: string, taken: SessionMcpServers): string {
  const base = name.replace(/[^A-Za-z0-9_-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 36) || "server";
  let candidate = base;
  for (let i = 2; candidate in taken; i++) candidate = `${base}_${i}`;
  return candidate;
}
