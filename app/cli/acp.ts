import { resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { UnknownSessionError, type SessionMeta } from "../../storage/store.js";
import type { SessionHost } from "../acp/host.js";
import { serveAcp } from "../acp/server.js";
import { createStderrReporter } from "../headless/final-output.js";
import { terminalText } from "../headless/terminal-text.js";
import { openHost, type Host } from "./host.js";
import { validateSessionFlags, type SessionFlags } from "./session-flags.js";
import { handleStops } from "./signals.js";
import { version } from "./version.js";

/** `keen acp` flags as commander parses them: the shared session flags (no cassette). */
export type AcpFlags = SessionFlags;

/**
 * `keen acp`: Keen as an Agent Client Protocol agent on stdio, for editors
 * (Zed, JetBrains, Neovim plugins) that spawn it. stdout carries protocol
 * messages only; logs go to stderr. Each ACP session gets its own session
 * engine (interactive turns, stored like every other session). Exits 0 when
 * the client closes stdin, after running turns are interrupted and stored.
 */
export async function acpCommand(flags: AcpFlags): Promise<number> {
  const log = (line: string) => void process.stderr.write(`keen acp: ${terminalText(line)}\n`);
  const host = await openHost("acp", { ...validateSessionFlags(flags), log });
  const server = await serveAcp({
    host: acpSessions(host),
    input: Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
    output: Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    version,
    log,
  });
  const stops = handleStops(() => server.stop());
  try {
    await server.done;
  } finally {
    stops.dispose();
    process.stdin.destroy();
  }
  return stops.exitCode();
}

/** ACP's sessions are the host's: one engine per ACP session over the one store; ids, storage and settings are Keen's own. */
function acpSessions(host: Host): SessionHost {
  return {
    async open(request) {
      let meta: SessionMeta | undefined;
      if (request.load !== undefined) {
        meta = await host.store.resolve(request.load).catch((error) => {
          if (error instanceof UnknownSessionError) return undefined;
          throw error;
        });
        // ACP session ids are exact: a prefix that happens to match is not the session asked for.
        if (meta?.id !== request.load) return undefined;
      }
      // Config errors (no provider, no such directory) fail this request, not the process.
      const session = await host.open({ meta, cwd: resolve(meta?.cwd ?? request.cwd), files: request.files, mcpServers: request.mcpServers });
      const { engine, setup } = session;
      engine.subscribe(createStderrReporter((line) => void process.stderr.write(line)));
      return {
        client: engine, id: session.id, cwd: session.cwd, model: setup.modelRef, mode: session.permissionMode,
        // What the engine's setup supports: its file restorer (absent when the editor owns the files), Keen's own loop (compaction).
        offers: { undo: Boolean(setup.checkFile && setup.restoreFile), compact: !setup.backend, jobs: Boolean(setup.jobs) },
        async close() {
          engine.stop("shutdown");
          await session.close();
        },
      };
    },
    async list(cwd) {
      const all = await host.store.list();
      return all.filter((s) => !cwd || s.cwd === cwd).map((s) => ({ id: s.id, cwd: s.cwd, title: s.title, updated: s.updated }));
    },
  };
}
