import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Tool, ToolResult } from "../tools/tool.js";
import { McpCallError, type McpConnection, type McpToolInfo } from "./connection.js";

/** Most characters of one result the model gets; the rest is cut with a note. */
export const MAX_RESULT_CHARS = 100_000;
/** Larger images are described, not sent (providers refuse them, and the conversation would carry them on every request). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** Providers accept tool names of at most 64 characters from [A-Za-z0-9_-]. */
const MAX_NAME = 64;

/** `mcp__<server>__<tool>`, in the providers' alphabet. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, MAX_NAME);
}

/** The Keen tools of one connected server (names that collide after cleaning keep the first). */
export function adaptTools(connection: McpConnection): Tool[] {
  const seen = new Set<string>();
  const out: Tool[] = [];
  for (const info of connection.tools) {
    const name = mcpToolName(connection.spec.name, info.name);
    if (seen.has(name)) continue;
    seen.add(name);
    out.push(adaptTool(connection, info, name));
  }
  return out;
}

function adaptTool(connection: McpConnection, info: McpToolInfo, name: string): Tool {
  const server = connection.spec.name;
  return {
    definition: { name, description: info.description?.trim() || `${info.name} (MCP server ${server})`, inputSchema: cleanSchema(info.inputSchema) },
    // MCP's annotations are hints from the server: readOnlyHint makes a call a read (never asked
    // about); anything else is `other`, the riskiest kind, asked about in ask and accept-edits
    // modes. openWorldHint is not mapped to `network`: it would change nothing the gate does, and
    // a tool that reaches other hosts may also change local state.
    kind: info.readOnly ? "read" : "other",
    async run(input, call) {
      const args = input && typeof input === "object" && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
      try {
        return toToolResult(await connection.call(info.name, args, call.signal), server, info.name);
      } catch (error) {
        if (error instanceof McpCallError) return { content: error.message, is_error: true, details: { server, tool: info.name } };
        throw error;
      }
    },
  };
}

/**
 * A server's input schema made acceptable to both providers: an object at the
 * top (Anthropic and OpenAI both require it), without the top-level
 * combinators (`oneOf`, `anyOf`, `allOf`, `not`, `enum`) OpenAI refuses there,
 * and without `$schema`/`$id` noise. Properties are passed on as written.
 */
export function cleanSchema(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  const { $schema: _s, $id: _i, oneOf: _o, anyOf: _a, allOf: _l, not: _n, enum: _e, type: _t, ...rest } = schema ?? {};
  const properties = rest.properties && typeof rest.properties === "object" && !Array.isArray(rest.properties) ? rest.properties : {};
  const required = Array.isArray(rest.required) ? rest.required.filter((r) => typeof r === "string" && r in properties) : undefined;
  const out: Record<string, unknown> = { ...rest, type: "object", properties };
  if (required?.length) out.required = required;
  else delete out.required;
  return out;
}

/**
 * An MCP result as a Keen tool result: text blocks as text; images described
 * in the text and attached (`images`: providers that take images in tool
 * results get them; over MAX_IMAGE_BYTES only described), audio and binary
 * resources described; `isError` as an error result; `structuredContent`
 * kept in `details.structured` (and as the text when the server sent no
 * text). The text is cut at MAX_RESULT_CHARS with a note, and a structured
 * result larger than that is left out of `details` (its size is kept).
 */
export function toToolResult(result: CallToolResult, server: string, tool: string): ToolResult {
  const parts: string[] = [];
  const media: { type: string; mimeType?: string; bytes: number }[] = [];
  const images: { media_type: string; data: string }[] = [];
  for (const block of result.content ?? []) {
    if (block.type === "text") parts.push(block.text);
    else if (block.type === "image" || block.type === "audio") {
      const bytes = Math.floor((block.data.length * 3) / 4);
      media.push({ type: block.type, mimeType: block.mimeType, bytes });
      const send = block.type === "image" && bytes <= MAX_IMAGE_BYTES;
      if (send) images.push({ media_type: block.mimeType, data: block.data });
      parts.push(`[${block.type} ${block.mimeType}, ${bytes} bytes${block.type === "image" && !send ? "; too large to send" : ""}]`);
    } else if (block.type === "resource") {
      const resource = block.resource as { uri: string; text?: string; mimeType?: string };
      parts.push(typeof resource.text === "string" ? resource.text : `[resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ""}]`);
    } else if (block.type === "resource_link") parts.push(`[resource ${block.uri}${block.name ? ` (${block.name})` : ""}]`);
  }
  const structured = result.structuredContent;
  const structuredText = structured ? JSON.stringify(structured) : "";
  if (!parts.length && structured) parts.push(structuredText);
  let content = parts.join("\n");
  if (content.length > MAX_RESULT_CHARS) {
    content = `${content.slice(0, MAX_RESULT_CHARS)}\n[cut: the result had ${content.length} characters; the first ${MAX_RESULT_CHARS} are shown]`;
  }
  if (!content) content = result.isError ? "The tool failed without a message." : "(no output)";
  const details: Record<string, unknown> = { server, tool };
  if (structured && structuredText.length <= MAX_RESULT_CHARS) details.structured = structured;
  else if (structured) details.structured_chars = structuredText.length;
  if (media.length) details.media = media;
  return { content, is_error: result.isError === true, details, ...(images.length ? { images } : {}) };
}
