import type { AgentCapabilities, AgentContext, McpServer, PermissionOption, SessionUpdate, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { SessionHost } from "./host.js";
import { AcpFailure, createAcpSession, INTERNAL_ERROR, INVALID_PARAMS, type AcpSession } from "./session.js";
import { promptText, UnsupportedContentError } from "./updates.js";

/** What `keen acp` serves on. */
export interface AcpServerOptions {
  host: SessionHost;
  /** Bytes from the client (stdin). */
  input: ReadableStream<Uint8Array>;
  /** Bytes to the client (stdout): protocol messages only. */
  output: WritableStream<Uint8Array>;
  version: string;
  /** One line for the log (stderr). */
  log(line: string): void;
}

/** A running ACP server. */
export interface AcpServer {
  /** Resolves once the connection has closed and every session has stored its turn and shut down. */
  readonly done: Promise<void>;
  /** Closes the connection (a signal); `done` follows. */
  stop(): void;
}

/** What Keen supports, advertised at `initialize`. No MCP: Keen has no MCP client yet. */
const CAPABILITIES: AgentCapabilities = {
  loadSession: true,
  promptCapabilities: { image: false, audio: false, embeddedContext: true },
  sessionCapabilities: { list: {} },
};

/**
 * `keen acp`: an Agent Client Protocol agent over the given streams, one
 * session engine per ACP session. The SDK does the JSON-RPC (framing, parse
 * and invalid-request errors, params validation, unknown methods); this maps
 * requests to engine commands and engine events to session updates.
 * Contract: no request or notification can end the process; a handler's
 * failure is that request's JSON-RPC error.
 */
export async function serveAcp(options: AcpServerOptions): Promise<AcpServer> {
  const acp = await import("@agentclientprotocol/sdk");
  const { host, log } = options;
  const sessions = new Map<string, AcpSession>();

  const find = (sessionId: string): AcpSession => {
    const session = sessions.get(sessionId);
    if (!session) throw acp.RequestError.sessionNotFound(sessionId);
    return session;
  };
  /** Runs a handler, turning Keen's failures into JSON-RPC errors the client can show. */
  const answer = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof acp.RequestError) throw error;
      if (error instanceof AcpFailure) throw new acp.RequestError(error.code, error.message);
      if (error instanceof UnsupportedContentError) throw new acp.RequestError(INVALID_PARAMS, error.message);
      throw new acp.RequestError(INTERNAL_ERROR, error instanceof Error ? error.message : String(error));
    }
  };
  const ignoreMcp = (servers: McpServer[]) => {
    if (servers.length) log(`MCP servers are not supported yet; ignoring ${servers.map((s) => s.name).join(", ")}`);
  };
  /** The session's way to the client: its updates and permission questions. */
  const bind = (sessionId: string, client: AgentContext) => ({
    notify: (update: SessionUpdate) => client.notify(acp.methods.client.session.update, { sessionId, update }),
    askPermission: async (toolCall: ToolCallUpdate, choices: PermissionOption[], signal: AbortSignal) => {
      const reply = await client.request(acp.methods.client.session.requestPermission, { sessionId, toolCall, options: choices }, { cancellationSignal: signal });
      return reply.outcome.outcome === "selected" ? reply.outcome.optionId : undefined;
    },
  });

  const app = acp.agent({ name: "keen" })
    .onRequest(acp.methods.agent.initialize, () => ({
      protocolVersion: acp.PROTOCOL_VERSION,
      agentCapabilities: CAPABILITIES,
      agentInfo: { name: "keen", title: "Keen", version: options.version },
      authMethods: [],
    }))
    .onRequest(acp.methods.agent.session.new, ({ params, client }) => answer(async () => {
      ignoreMcp(params.mcpServers);
      const hosted = await host.open({ cwd: params.cwd });
      if (!hosted) throw new AcpFailure("could not start a session", INTERNAL_ERROR);
      const session = createAcpSession({ hosted, log, ...bind(hosted.id, client) });
      sessions.set(hosted.id, session);
      return { sessionId: hosted.id, modes: session.modes(), configOptions: await session.configOptions() };
    }))
    .onRequest(acp.methods.agent.session.load, ({ params, client }) => answer(async () => {
      ignoreMcp(params.mcpServers);
      let session = sessions.get(params.sessionId);
      if (!session) {
        const hosted = await host.open({ cwd: params.cwd, load: params.sessionId });
        if (!hosted) throw acp.RequestError.sessionNotFound(params.sessionId);
        if (hosted.cwd !== params.cwd) log(`session ${hosted.id} keeps its own directory ${hosted.cwd} (the client asked for ${params.cwd})`);
        session = createAcpSession({ hosted, log, ...bind(hosted.id, client) });
        sessions.set(hosted.id, session);
      }
      // History goes out as session/update notifications before this answer, as ACP requires.
      await session.load();
      return { modes: session.modes(), configOptions: await session.configOptions() };
    }))
    .onRequest(acp.methods.agent.session.list, ({ params }) => answer(async () => {
      const stored = await host.list(params.cwd ?? undefined);
      return {
        sessions: stored.map((s) => ({ sessionId: s.id, cwd: s.cwd, title: s.title, updatedAt: new Date(s.updated).toISOString() })),
      };
    }))
    .onRequest(acp.methods.agent.session.setMode, ({ params }) => answer(async () => {
      await find(params.sessionId).setMode(params.modeId);
      return {};
    }))
    .onRequest(acp.methods.agent.session.setConfigOption, ({ params }) => answer(async () => ({
      configOptions: await find(params.sessionId).setConfigOption(params.configId, params.value),
    })))
    .onRequest(acp.methods.agent.session.prompt, ({ params, signal }) => answer(async () => {
      const session = find(params.sessionId);
      const text = promptText(params.prompt);
      // `$/cancel_request` for the prompt itself means the same as session/cancel.
      signal.addEventListener("abort", () => session.cancel(), { once: true });
      return { stopReason: await session.prompt(text) };
    }))
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      const session = sessions.get(params.sessionId);
      if (session) session.cancel();
      else log(`session/cancel for unknown session ${params.sessionId}`);
    });

  const connection = app.connect(acp.ndJsonStream(options.output, options.input));
  const done = connection.closed.catch((error) => log(`connection closed: ${error instanceof Error ? error.message : String(error)}`))
    .then(() => Promise.all([...sessions.values()].map((s) => s.close().catch((error) => log(`closing session ${s.id}: ${String(error)}`)))))
    .then(() => undefined);
  return { done, stop: () => connection.close() };
}
