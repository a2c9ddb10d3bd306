/** What the CLI runner's permission relay and its MCP server (two processes) agree on. */

/** The MCP server's name in the CLI's `--mcp-config`, and its one tool: claude calls it `mcp__keen__approve`. */
export const RELAY_SERVER = "keen";
export const RELAY_TOOL = "approve";

/** One ask, one JSON line over the socket: what claude passed to the permission prompt tool. */
export interface RelayAsk {
  tool_name: string;
  input: Record<string, unknown>;
  tool_use_id?: string;
}

/**
 * The answer claude expects from a permission prompt tool, as the JSON text of
 * the tool's result. Format from the claude-code maintainers' description in
 * anthropics/claude-code#1175 (comment 2908916791), as used by e.g. cco-mcp:
 * `{"behavior":"allow","updatedInput":{…}}` or `{"behavior":"deny","message":"…"}`.
 */
export type RelayAnswer = { behavior: "allow"; updatedInput: Record<string, unknown> } | { behavior: "deny"; message: string };
