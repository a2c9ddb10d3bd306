import { statSync } from "node:fs";
import { isAbsolute } from "node:path";
import type { AgentCapabilities, AgentContext, FileSystemCapabilities, PermissionOption, SessionUpdate, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { ClientFiles, SessionHost } from "./host.js";
import { MCP_CAPABILITIES, mcpServersFor, type SessionMcpServers } from "./mcp.js";
import { AcpFailure, createAcpSession, INTERNAL_ERROR, INVALID_PARAMS, type AcpSession } from "./session.js";
import { promptImages, promptText, UnsupportedContentError } from "./updates.js";

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

/** What Keen supports, advertised at `initialize` (MCP: see mcp.ts). */
const CAPABILITIES: AgentCapabilities = {
  loadSession: true,
  promptCapabilities: { image: true, audio: false, embeddedContext: true },
  sessionCapabilities: { list: {}, resume: {}, close: {} },
  mcpCapabilities: MCP_CAPABILITIES,
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
  // What the client offered at `initialize`: its editor's files for the file tools.
  let fs: FileSystemCapabilities | undefined;

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
      if (error instanceof AcpFailure) throw new acp.RequestError(error.code, error.message, error.errorCode ? { error_code: error.errorCode } : undefined);
      if (error instanceof UnsupportedContentError) throw new acp.RequestError(INVALID_PARAMS, error.message);
      throw new acp.RequestError(INTERNAL_ERROR, error instanceof Error ? error.message : String(error));
    }
  };
  /** The client's files for one session, for the sides it offered; undefined: the tools use the disk. */
  const filesOf = (client: AgentContext) => (sessionId: string): ClientFiles | undefined => {
    if (!fs?.readTextFile && !fs?.writeTextFile) return undefined;
    return {
      ...(fs.readTextFile ? {
        readText: async (path: string, signal?: AbortSignal) =>
          (await client.request(acp.methods.client.fs.readTextFile, { sessionId, path }, { cancellationSignal: signal })).content,
      } : {}),
      ...(fs.writeTextFile ? {
        writeText: async (path: string, content: string, signal?: AbortSignal) =>
          void await client.request(acp.methods.client.fs.writeTextFile, { sessionId, path, content }, { cancellationSignal: signal }),
      } : {}),
    };
  };
  /** The ACP session for a stored Keen session, started in this process if it is not already; undefined when no such session. */
  const resumed = async (
    sessionId: string, cwd: string, client: AgentContext, mcpServers: SessionMcpServers | undefined,
  ): Promise<{ session: AcpSession; fresh: boolean } | undefined> => {
    const session = sessions.get(sessionId);
    if (session) {
      if (mcpServers) log(`session ${sessionId} is open already: it keeps the MCP servers it started with`);
      return { session, fresh: false };
    }
    const hosted = await host.open({ cwd, load: sessionId, files: filesOf(client), mcpServers });
    if (!hosted) return undefined;
    if (hosted.cwd !== cwd) log(`session ${hosted.id} keeps its own directory ${hosted.cwd} (the client asked for ${cwd})`);
    const created = createAcpSession({ hosted, log, ...bind(hosted.id, client) });
    sessions.set(hosted.id, created);
    return { session: created, fresh: true };
  };
  /** The session's way to the client: its updates and permission questions. */
  const bind = (sessionId: string, client: AgentContext) => ({
    notify: (update: SessionUpdate) => client.notify(acp.methods.client.session.update, { sessionId, update }),
    askPermission: async (toolCall: ToolCallUpdate, choices: PermissionOption[], signal: AbortSignal) => {
      try {
        // A cancel withdraws the request (`$/cancel_request`) and stops the wait at once, as ACP asks of an agent on
        // session/cancel: a client that never answers must not hold the request open until the connection closes.
        const reply = await client.request(acp.methods.client.session.requestPermission, { sessionId, toolCall, options: choices },
          { cancellationSignal: signal, stopWaitingOnCancel: true });
        return reply.outcome.outcome === "selected" ? reply.outcome.optionId : undefined;
      } catch (error) {
        // Withdrawn by Keen (the SDK's -32800, or the connection closing after it): not approved, and no failure.
        if (signal.aborted) return undefined;
        throw error;
      }
    },
  });

  /**
   * The session's commands, once the answer naming the session is out: the SDK writes in call
   * order, and the answer is queued within the microtasks that follow the handler's return.
   */
  const announceLater = (session: AcpSession) =>
    void setImmediate(() => void session.announce().catch((error) => log(`could not send the commands: ${String(error)}`)));

  const app = acp.agent({ name: "keen" })
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      fs = params.clientCapabilities?.fs;
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: CAPABILITIES,
        agentInfo: { name: "keen", title: "Keen", version: options.version },
        authMethods: [],
      };
    })
    .onRequest(acp.methods.agent.session.new, ({ params, client }) => answer(async () => {
      checkCwd(params.cwd, true);
      const hosted = await host.open({ cwd: params.cwd, files: filesOf(client), mcpServers: mcpServersFor(params.mcpServers, log) });
      if (!hosted) throw new AcpFailure("could not start a session", INTERNAL_ERROR);
      const session = createAcpSession({ hosted, log, ...bind(hosted.id, client) });
      sessions.set(hosted.id, session);
      const configOptions = await session.configOptions();
      announceLater(session);
      return { sessionId: hosted.id, modes: session.modes(), configOptions };
    }))
    .onRequest(acp.methods.agent.session.load, ({ params, client }) => answer(async () => {
      checkCwd(params.cwd, false);
      const found = await resumed(params.sessionId, params.cwd, client, mcpServersFor(params.mcpServers, log));
      if (!found) throw acp.RequestError.sessionNotFound(params.sessionId);
      // History goes out as session/update notifications before this answer, as ACP requires.
      await found.session.load(true);
      const configOptions = await found.session.configOptions();
      announceLater(found.session);
      return { modes: found.session.modes(), configOptions };
    }))
    .onRequest(acp.methods.agent.session.resume, ({ params, client }) => answer(async () => {
      checkCwd(params.cwd, false);
      const found = await resumed(params.sessionId, params.cwd, client, mcpServersFor(params.mcpServers, log));
      if (!found) throw acp.RequestError.sessionNotFound(params.sessionId);
      // Like load, without the history: the client still shows it.
      if (found.fresh) await found.session.load(false);
      const configOptions = await found.session.configOptions();
      announceLater(found.session);
      return { modes: found.session.modes(), configOptions };
    }))
    .onRequest(acp.methods.agent.session.close, ({ params }) => answer(async () => {
      const session = find(params.sessionId);
      sessions.delete(params.sessionId);
      // A running turn is interrupted (its prompt answers `cancelled`) and stored before this answers.
      await session.close();
      return {};
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
      return { stopReason: await session.prompt(text, promptImages(params.prompt)) };
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

/**
 * ACP requires an absolute `cwd`; a relative one (or, for a new session, a directory that is
 * not there) is the client's mistake, so invalid params. A loaded session keeps its own
 * directory, so only the form of the client's is checked then.
 */
function checkCwd(cwd: string, mustExist: boolean): void {
  if (!isAbsolute(cwd)) throw new AcpFailure(`cwd must be an absolute path, not "${cwd}"`, INVALID_PARAMS);
  if (!mustExist) return;
  let directory = false;
  try {
    directory = statSync(cwd).isDirectory();
  } catch {
    throw new AcpFailure(`cwd ${cwd} does not exist`, INVALID_PARAMS);
  }
  if (!directory) throw new AcpFailure(`cwd ${cwd} is not a directory`, INVALID_PARAMS);
}
