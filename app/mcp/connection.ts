import { join, resolve } from "node:path";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { McpServerSpec, McpSettings } from "./config.js";
import type { LogFilter } from "./server-log.js";
import { ProcessGroupTransport } from "./stdio-transport.js";
import { loadNodeFetch } from "../wasm-flags.js";

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
  /** How those logs are cleaned (secrets, control characters). */
  log?: LogFilter;
  /** Most bytes of one message from a stdio server (default MAX_MESSAGE_BYTES). */
  maxMessageBytes?: number;
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
 * the server dies fails and is not repeated (it may have had effects). A
 * stdio server Keen stopped for a message over the cap is restarted at once.
 *
 * `list_changed` only marks the list stale: at most one refresh runs at a
 * time, at most one starts per model request (`nextRequest`) and one at the
 * end of each call, so a server that floods notifications costs a bounded
 * number of `tools/list` requests and cannot hold a turn.
 */
export function createConnection(options: ConnectionOptions) {
  const { spec } = options;
  const connectTimeoutMs = spec.config.connectTimeoutMs ?? options.settings.connectTimeoutMs;
  const callTimeoutMs = spec.config.callTimeoutMs ?? options.settings.callTimeoutMs;
  let client: SdkClient | undefined;
  let state: McpServerState = "connecting";
  let error: string | undefined;
  let tools: McpToolInfo[] = [];
  let closing = false;
  let reconnectTried = false;
  let reopening: Promise<void> | undefined;
  let stale = false;
  let inflight: Promise<void> | undefined;
  let refreshBudget = 1;

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
        command: run.command, args: run.args, cwd: resolve(options.cwd, config.cwd ?? "."), logFile, log: options.log,
        maxMessageBytes: options.maxMessageBytes, env: { ...options.baseEnv, ...config.env },
      }), deadline);
    } else {
      const url = new URL(config.url);
      const init = { headers: config.headers ?? {} };
      // The SDK's transports use Node's fetch.
      loadNodeFetch();
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
    if (closing) {
      // Closed while this (re)start was under way: the new server goes too.
      await client?.close().catch(() => {});
      return;
    }
    state = "connected";
    error = undefined;
    reconnectTried = false;
    stale = false;
  }

  /** Starts the server again (once at a time); on failure it stays `failed` and its tools are withdrawn. */
  function reconnect(): Promise<void> {
    reopening ??= (async () => {
      reconnectTried = true;
      const before = names(tools);
      try {
        await open();
        if (names(tools) !== before) options.onToolsChanged();
      } catch (failure) {
        state = "failed";
        error = messageOf(failure);
        tools = [];
        options.onToolsChanged();
      } finally {
        reopening = undefined;
      }
    })();
    return reopening;
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
      // "Connection closed" or "write EPIPE" says less than how the server ended (read before the close below can end it).
      const exit = made instanceof ProcessGroupTransport && !(failure instanceof ConnectTimeout) ? await made.exitAfterFailure(2000) : undefined;
      // Not awaited: a server that ignores its stdin closing must not hold the session past its connect timeout.
      void c.close().catch(() => {});
      if (exit) throw new Error(`the server exited (${exit}) before it was ready`);
      throw failure;
    } finally {
      clearTimeout(timer);
    }
    c.setNotificationHandler(sdk.ToolListChangedNotificationSchema, async () => {
      stale = true;
      refreshSoon();
    });
    c.onclose = () => {
      if (closing || client !== c) return;
      state = "disconnected";
      const failure = made instanceof ProcessGroupTransport ? made.failure : undefined;
      error = failure ?? "the server exited";
      if (failure) {
        options.onDisconnect(`server "${spec.name}": ${failure} and starts it again (log: ${logFile})`);
        void reconnect();
      } else options.onDisconnect(`server "${spec.name}" disconnected; the next call reconnects once (log: ${logFile})`);
    };
    return c;
  }

  /** Starts a refresh when the list is stale, none is running and this request's budget allows one. */
  function refreshSoon(): void {
    if (!stale || inflight || refreshBudget < 1 || !client || state !== "connected") return;
    refreshBudget--;
    startRefresh(client);
  }

  function startRefresh(c: SdkClient): Promise<void> {
    stale = false;
    const run = (async () => {
      try {
        const before = names(tools);
        const next = await listTools(c, connectTimeoutMs);
        if (client !== c) return;
        tools = next;
        if (names(tools) !== before) options.onToolsChanged();
      } catch {
        // The old list stays; a call to a tool that is gone fails with the server's own error.
      }
    })();
    inflight = run.finally(() => {
      inflight = undefined;
      refreshSoon();
    });
    return inflight;
  }

  /** At the end of a call: the list as it is after the call (the refresh under way, then at most one more). */
  async function settle(): Promise<void> {
    if (inflight) await inflight;
    if (inflight) await inflight;
    else if (stale && client && state === "connected") await startRefresh(client);
  }

  async function call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    if (reopening) await reopening;
    else if (state === "disconnected" && !reconnectTried) {
      await reconnect();
      if ((state as McpServerState) === "failed") throw new McpCallError(`MCP server "${spec.name}" exited and could not be restarted: ${error}`);
    }
    if (state !== "connected" || !client) throw new McpCallError(`MCP server "${spec.name}" is not connected (${error ?? state})`);
    const transport = client.transport;
    try {
      return (await client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: callTimeoutMs })) as CallToolResult;
    } catch (failure) {
      if (signal.aborted) throw new McpCallError("Interrupted: the call was cancelled.");
      if ((failure as { code?: number }).code === REQUEST_TIMEOUT) {
        throw new McpCallError(`MCP tool ${tool} on "${spec.name}" timed out after ${seconds(callTimeoutMs)} (callTimeoutMs); the call was cancelled.`);
      }
      const stopped = transport instanceof ProcessGroupTransport ? transport.failure : undefined;
      if (stopped) throw new McpCallError(`MCP tool ${tool} on "${spec.name}" failed: ${stopped} and starts it again. Ask for less at a time.`);
      if ((state as McpServerState) === "disconnected") throw new McpCallError(`MCP server "${spec.name}" exited during the call; it was not repeated.`);
      throw new McpCallError(`MCP tool ${tool} on "${spec.name}" failed: ${messageOf(failure)}`);
    } finally {
      // A call that changed the tool list: the next request sees the new list. An interrupted
      // call does not wait (a refresh may take up to the connect timeout; Ctrl-C must not).
      if (!signal.aborted) await settle();
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
    /** A new model request is being built: one more refresh may run if the list is stale. */
    nextRequest(): void {
      refreshBudget = 1;
      refreshSoon();
    },
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
