import type { Tool } from "../tools/tool.js";
import { DEFAULT_MCP_SETTINGS, type McpServerSpec, type McpSettings, type McpSource } from "./config.js";
import { createConnection, type McpConnection, type McpServerState } from "./connection.js";
import type { LogFilter } from "./server-log.js";
import { adaptTools } from "./tools.js";

/** What a front end learns about a server as it happens (the bus event `mcp-server` carries it). */
export interface McpNotice {
  server: string;
  /** `warning`: a configuration problem not tied to one running server (`server` may be empty). */
  status: "connected" | "failed" | "untrusted" | "disconnected" | "tools-changed" | "warning";
  /** The server's tools as the model is offered them (`mcp__<server>__<tool>`). */
  tools: string[];
  message?: string;
}

/** One server as `status()` reports it (`keen mcp list`, the TUI). */
export interface McpServerStatus {
  name: string;
  source: McpSource;
  state: McpServerState | "untrusted";
  tools: string[];
  error?: string;
  logFile?: string;
}

/** How servers are started. */
export interface McpStartOptions {
  /** Where stdio servers run unless their config says otherwise. */
  cwd: string;
  /** Environment stdio servers start from (give it without secrets: see README "MCP servers"). */
  env: NodeJS.ProcessEnv;
  /** Per-server stderr logs go here. */
  logDir: string;
  /** How those logs are cleaned: the session's redactor, and the rule that makes control characters visible. */
  log?: LogFilter;
  /** Most bytes of one message from a stdio server (default 64 MiB); tests lower it. */
  maxMessageBytes?: number;
  settings?: Partial<McpSettings>;
  clientVersion: string;
  /** Loads the SDK (the side bundle); tests may pass their own. */
  loadSdk?: () => Promise<typeof import("./sdk.js")>;
  /** Project servers not started for want of trust: reported, never started. */
  untrusted?: McpServerSpec[];
  /**
   * Confinement for stdio servers with `sandbox: true` (the session's sandbox policy):
   * the command and arguments to spawn instead. A string says why there is none, and
   * such servers are refused with it: never started unconfined.
   */
  confine?: Confine | string;
}

/** Turns a stdio server's command into one that runs it inside the sandbox. */
export type Confine = (command: string, args: string[]) => Promise<{ command: string; args: string[] }>;

/** A session's MCP servers. Contract: no method throws; a server's failure is a notice, never the session's. */
export interface McpHandle {
  /** The tools of every connected server, current. Called once per model request: it lets a stale list (list_changed) refresh once. */
  tools(): Tool[];
  status(): McpServerStatus[];
  /** Delivers notices: first every one so far, then each as it happens. A later call replaces the listener. */
  attach(listener: (notice: McpNotice) => void): void;
  /** Ends every server (stdio: the whole process group). */
  close(): Promise<void>;
}

/**
 * Starts every server in parallel and resolves once each one has connected
 * or failed (a server gets at most its connect timeout), so the first request
 * sees every tool that was ready in time. The SDK is loaded only when there is
 * a server to start. Servers with `sandbox: true` run inside the session's
 * sandbox, or are refused when it has none (starting one unconfined would widen
 * the run silently).
 */
export async function startMcp(servers: McpServerSpec[], options: McpStartOptions): Promise<McpHandle> {
  const settings = { ...DEFAULT_MCP_SETTINGS, ...options.settings };
  const backlog: McpNotice[] = [];
  let listener: ((notice: McpNotice) => void) | undefined;
  const notify = (notice: McpNotice) => (listener ? listener(notice) : backlog.push(notice));
  let sdk: Promise<typeof import("./sdk.js")> | undefined;
  const loadSdk = () => (sdk ??= (options.loadSdk ?? (() => import("./sdk.js")))());
  const toolNames = (c: McpConnection) => adaptTools(c).map((t) => t.definition.name);

  const connections = servers.map((raw) => {
    const confine = typeof options.confine === "function" ? options.confine : undefined;
    const spec = "command" in raw.config && raw.config.sandbox && !raw.error && !confine
      ? { ...raw, error: `"sandbox": true, but ${options.confine ?? "this session has no sandbox"}; the server is not started unconfined` }
      : raw;
    const connection: McpConnection = createConnection({
      spec, settings, confine, baseEnv: options.env, cwd: options.cwd, logDir: options.logDir, log: options.log, maxMessageBytes: options.maxMessageBytes,
      clientVersion: options.clientVersion, loadSdk,
      onToolsChanged: () => notify({ server: spec.name, status: "tools-changed", tools: toolNames(connection) }),
      onDisconnect: (message) => notify({ server: spec.name, status: "disconnected", tools: toolNames(connection), message }),
    });
    return connection;
  });
  for (const spec of options.untrusted ?? []) {
    notify({
      server: spec.name, status: "untrusted", tools: [],
      message: `project server "${spec.name}" (${spec.file}) not started: run \`keen mcp trust\` in this workspace to use it`,
    });
  }
  await Promise.all(connections.map(async (c) => {
    await c.start();
    if (c.state === "connected") notify({ server: c.spec.name, status: "connected", tools: toolNames(c) });
    else notify({ server: c.spec.name, status: "failed", tools: [], message: `server "${c.spec.name}" failed to start: ${c.error} (log: ${c.logFile})` });
  }));

  return {
    tools: () => connections.flatMap((c) => {
      c.nextRequest();
      return c.state === "connected" || c.state === "disconnected" ? adaptTools(c) : [];
    }),
    status: () => [
      ...connections.map((c) => ({
        name: c.spec.name, source: c.spec.source, state: c.state, tools: toolNames(c),
        ...(c.error ? { error: c.error } : {}), ...("command" in c.spec.config ? { logFile: c.logFile } : {}),
      })),
      ...(options.untrusted ?? []).map((s) => ({ name: s.name, source: s.source, state: "untrusted" as const, tools: [] })),
    ],
    attach(next) {
      listener = next;
      for (const notice of backlog.splice(0)) next(notice);
    },
    async close() {
      await Promise.all(connections.map((c) => c.close()));
    },
  };
}
