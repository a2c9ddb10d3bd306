import type { EngineClient } from "../../protocol/client.js";
import type { PermissionMode } from "../../protocol/commands.js";
import type { CommandOffers } from "./commands.js";
import type { SessionMcpServers } from "./mcp.js";

/**
 * What ACP mode is handed by the composition root (app/cli/acp.ts): a way to
 * start one session engine per ACP session, and the stored sessions. ACP
 * itself never sees a loop, provider or store.
 */
export interface SessionHost {
  /**
   * Starts an engine for a fresh session in `cwd`, or for the stored session
   * `load` (undefined when no session has exactly that id). Throws an Error
   * whose message the client is shown (no provider configured, no such
   * directory).
   */
  open(request: {
    cwd: string; load?: string; files?: (sessionId: string) => ClientFiles | undefined;
    /** The client's MCP servers for this session, started with its engine. */
    mcpServers?: SessionMcpServers;
  }): Promise<HostedSession | undefined>;
  /** Stored sessions, newest first, optionally only those of one directory. */
  list(cwd?: string): Promise<StoredSession[]>;
}

/** One engine serving one ACP session. */
export interface HostedSession {
  client: EngineClient;
  /** Keen's session id, which is also the ACP session id. */
  id: string;
  /** The session's directory (a stored session keeps its own). */
  cwd: string;
  /** `provider/model` the next turn will use. */
  model: string;
  /** The permission mode the session starts in. */
  mode: PermissionMode;
  /** The slash commands its engine can serve (no undo where the editor owns the files or the CLI runs the turns). */
  offers: CommandOffers;
  /** Interrupts a running turn and resolves once the engine has stored everything and shut down. */
  close(): Promise<void>;
}

/** A stored session as `session/list` reports it. */
export interface StoredSession {
  id: string;
  cwd: string;
  title: string;
  /** Last activity, ms since the epoch. */
  updated: number;
}

/**
 * The client's editor as the file tools' storage for one session (`fs/read_text_file`,
 * `fs/write_text_file`); a side is absent when the client did not offer it. The host hands
 * it to the session's tools, which ask it only for paths the filesystem guard approved.
 */
export interface ClientFiles {
  readText?(path: string, signal?: AbortSignal): Promise<string>;
  writeText?(path: string, text: string, signal?: AbortSignal): Promise<void>;
}
