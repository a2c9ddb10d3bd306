/*
 * The parts of the MCP SDK Keen's client uses, in one module: the build makes
 * it a side bundle (dist/mcp-sdk.cjs, see scripts/build.mjs), loaded only when
 * a session has MCP servers, so neither start-up nor the snapshot carries it.
 */
export { Client } from "@modelcontextprotocol/sdk/client/index.js";
export { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
export { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
export { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
