import { join, resolve } from "node:path";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerSpec, McpSettings } from "./config.js";
import { ProcessGroupTransport } from "./stdio-transport.js";

type Sdk = typeof import("./sdk.js");
type SdkClient = InstanceType<Sdk["Client"]>;

/** A tool as one server offers it. */
export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  /** `annotations.readOnlyHint`: the permission policy treats it as a read. */
  readOnly: boolean;
}

/** Where one server stands. */
export type McpServerState = "connecting" | "connected" | "failed" | "disconnected" | "closed";

/** What a connection needs from its manager. */
export interface ConnectionOptions {
  spec: McpServerSpec;
  settings: McpSettings;
  /** Environment a stdio server starts from (its own `env` is added on top). */
  baseEnv: NodeJS.ProcessEnv;
  /** Where a stdio server runs when its config names no `cwd`. */
  cwd: string;
  /** Per-server stderr logs go here. */
  logDir: string;
  clientVersion: string;
  /** How a `sandbox: true` stdio server's command is confined (the manager refuses such a server without it). */
  confine?: (command: string, args: string[]) => Promise<{ command: string; args: string[] }>;
  loadSdk(): Promise<Sdk>;
  /** The tool list changed (list_changed, or different after a reconnect). */
  onToolsChanged(): void;
  /** The server went away on its own (not by close()). */
  onDisconnect(message: string): void;
}

/** Thrown for a call that could not be made or did not finish; the message is written for the model. */
export class McpCallError extends Error {}

/** A JSON-RPC error code the SDK uses for its request timeout. */
const REQUEST_TIMEOUT = -32001;

/**
 * One MCP server: connect (bounded by the connect timeout), its tool list,
 * calls. A server that died is reconnected once, by the next call; if that
 * fails the call fails and the server stays `failed`. A call in flight when
 * the server dies fails and is not repeated (it may have had effects).
 */
export function createConnection(options: ConnectionOptions) {
  const { spec } = options;
  const connectTimeoutMs = spec.config.connectTimeoutMs ?? options.settings.connectTimeoutMs;
  const callTimeoutMs = spec.config.callTimeoutMs ?? options.settings.callTimeoutMs;
  let client: SdkClient | undefined;
  let state: McpServerState = "connecting";
  let error: string | undefined;
  let tools: McpToolInfo[] = [];
  let refreshing: Promise<void> | undefined;
  let closing = false;
  let reconnectTried = false;

  const logFile = join(options.logDir, `${spec.name}.log`);

  async function open(): Promise<void> {
    if (spec.error) throw new Error(spec.error);
    const sdk = await options.loadSdk();
    const deadline = Date.now() + connectTimeoutMs;
    const config = spec.config;
    if ("command" in config) {
      const plain = { command: config.command, args: config.args ?? [] };
      if (config.sandbox && !options.confine) throw new Error("sandbox: true, but no sandbox is available");
      const run = config.sandbox ? await options.confine!(plain.command, plain.args) : plain;
      client = await attempt(sdk, () => new ProcessGroupTransport({
        command: run.command, args: run.args, cwd: resolve(options.cwd, config.cwd ?? "."), logFile,
        env: { ...options.baseEnv, ...config.env },
      }), deadline);
    } else {
      const url = new URL(config.url);
      const init = { headers: config.headers ?? {} };
      const sse = () => new sdk.SSEClientTransport(url, { requestInit: init, eventSourceInit: { fetch: withHeaders(init.headers) } });
      if (config.type === "sse") client = await attempt(sdk, sse, deadline);
      else {
        try {
          client = await attempt(sdk, () => new sdk.StreamableHTTPClientTransport(url, { requestInit: init }), deadline);
        } catch (streamable) {
          // A legacy server answers the Streamable HTTP POST with 404/405: try the old SSE transport in the time left.
          if (streamable instanceof ConnectTimeout) throw streamable;
          client = await attempt(sdk, sse, deadline).catch(() => {
            throw streamable;
          });
        }
      }
    }
    state = "connected";
    error = undefined;
    reconnectTried = false;
  }

  /** Connects one client over one transport and reads the tool list before `deadline`; closes it on failure. */
  async function attempt(sdk: Sdk, transport: () => Transport, deadline: number): Promise<SdkClient> {
    const c = new sdk.Client({ name: "keen", version: options.clientVersion }, { capabilities: {} });
    const remaining = Math.max(1, deadline - Date.now());
    const made = transport();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ConnectTimeout(`did not connect within ${seconds(connectTimeoutMs)} (connectTimeoutMs)`)), remaining);
    });
    try {
      await Promise.race([
        (async () => {
          await c.connect(made, { timeout: remaining });
          tools = await listTools(c, remaining);
        })(),
        timeout,
      ]);
    } catch (failure) {
      // Not awaited: a server that ignores its stdin closing must not hold the session past its connect timeout.
      void c.close().catch(() => {});
      // "Connection closed" says less than how the server ended.
      if (made instanceof ProcessGroupTransport && made.exit && !(failure instanceof ConnectTimeout)) {
        throw new Error(`the server exited (${made.exit}) before it was ready`);
      }
      throw failure;
    } finally {
      clearTimeout(timer);
    }
    c.setNotificationHandler(sdk.ToolListChangedNotificationSchema, async () => {
      refreshing = refresh(c);
    });
    c.onclose = () => {
      if (closing || client !== c) return;
      state = "disconnected";
      error = "the server exited";
      options.onDisconnect(`server "${spec.name}" disconnected; the next call reconnects once (log: ${logFile})`);
    };
    return c;
  }

  async function refresh(c: SdkClient): Promise<void> {
    try {
      const before = names(tools);
      tools = await listTools(c, connectTimeoutMs);
      if (names(tools) !== before) options.onToolsChanged();
    } catch {
      // The old list stays; a call to a tool that is gone fails with the server's own error.
    }
  }

  async function call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    if (state === "disconnected" && !reconnectTried) {
      reconnectTried = true;
      const before = names(tools);
      try {
        await open();
      } catch (failure) {
        state = "failed";
        error = messageOf(failure);
        tools = [];
        options.onToolsChanged();
        throw new McpCallError(`MCP server "${spec.name}" exited and could not be restarted: ${error}`);
      }
      if (names(tools) !== before) options.onToolsChanged();
    }
    if (state !== "connected" || !client) throw new McpCallError(`MCP server "${spec.name}" is not connected (${error ?? state})`);
    try {
      return (await client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: callTimeoutMs })) as CallToolResult;
    } catch (failure) {
      if (signal.aborted) throw new McpCallError("Interrupted: the call was cancelled.");
      if ((failure as { code?: number }).code === REQUEST_TIMEOUT) {
        throw new McpCallError(`MCP tool ${tool} on "${spec.name}" timed out after ${seconds(callTimeoutMs)} (callTimeoutMs); the call was cancelled.`);
      }
      if ((state as McpServerState) === "disconnected") throw new McpCallError(`MCP server "${spec.name}" exited during the call; it was not repeated.`);
      throw new McpCallError(`MCP tool ${tool} on "${spec.name}" failed: ${messageOf(failure)}`);
    } finally {
      // A call that changed the tool list: the next request sees the new list.
      await refreshing;
    }
  }

  return {
    spec,
    logFile,
    get state() {
      return state;
    },
    get error() {
      return error;
    },
    get tools() {
      return tools;
    },
    /** Connects; on failure the state is `failed` with `error` set. Never throws. */
    async start(): Promise<void> {
      try {
        await open();
      } catch (failure) {
        state = "failed";
        error = messageOf(failure);
      }
    },
    call,
    async close(): Promise<void> {
      closing = true;
      state = "closed";
      await client?.close().catch(() => {});
    },
  };
}

export type McpConnection = ReturnType<typeof createConnection>;

class ConnectTimeout extends Error {}

async function listTools(c: SdkClient, timeout: number): Promise<McpToolInfo[]> {
  const out: McpToolInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = await c.listTools(cursor ? { cursor } : undefined, { timeout });
    for (const tool of page.tools) {
      out.push({
        name: tool.name, description: tool.description, inputSchema: tool.inputSchema as Record<string, unknown>,
        readOnly: tool.annotations?.readOnlyHint === true,
      });
    }
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

function names(tools: McpToolInfo[]): string {
  return tools.map((t) => t.name).join("\0");
}

/** The SSE stream's GET carries the configured headers too. */
function withHeaders(headers: Record<string, string>) {
  return (url: string | URL, init?: RequestInit) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } });
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms % 1000 ? 1 : 0)} s`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
