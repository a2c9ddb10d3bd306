import { resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { EventBus } from "../../protocol/bus.js";
import { newSessionId } from "../../storage/ids.js";
import { openStore } from "../../storage/level-store.js";
import { UnknownSessionError, type SessionMeta, type SessionStore } from "../../storage/store.js";
import type { SessionHost } from "../acp/host.js";
import { serveAcp } from "../acp/server.js";
import { createSessionEngine } from "../agent/engine.js";
import { DEFAULT_RETRY } from "../agent/retry.js";
import { createStderrReporter } from "../headless/final-output.js";
import { terminalText } from "../headless/terminal-text.js";
import { keenPaths, type KeenPaths } from "./config.js";
import { storedRunner } from "./cli-runner-setup.js";
import { checkModel, createPreparer, listModels, type FrontEndSettings } from "./engine-setup.js";
import { validateRunFlags } from "./run-flags.js";

declare const KEEN_VERSION: string;
const version = typeof KEEN_VERSION === "string" ? KEEN_VERSION : "0.0.0-dev";

/** `keen acp` flags as commander parses them. */
export interface AcpFlags {
  model?: string;
  permissionMode?: string;
  allowedTools?: string;
  disallowedTools?: string;
  maxTurns?: string;
  runner?: string;
  sandbox?: string;
}

const EXIT_FOR = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

/**
 * `keen acp`: Keen as an Agent Client Protocol agent on stdio, for editors
 * (Zed, JetBrains, Neovim plugins) that spawn it. stdout carries protocol
 * messages only; logs go to stderr. Each ACP session gets its own session
 * engine (interactive turns, stored like every other session). Exits 0 when
 * the client closes stdin, after running turns are interrupted and stored.
 */
export async function acpCommand(flags: AcpFlags): Promise<number> {
  const settings = validateRunFlags({ ...flags, stdin: false }, false);
  const paths = keenPaths();
  const store = openStore(paths.dataDir);
  const frontEnd: FrontEndSettings = {
    allowedTools: settings.allowedTools, disallowedTools: settings.disallowedTools, maxTurns: settings.maxTurns,
    headless: false, permissionMode: settings.permissionMode, defaultMode: "ask", sandbox: settings.sandbox,
    runner: settings.runner, runnerOf: (id) => storedRunner(store, id),
  };
  const log = (line: string) => void process.stderr.write(`keen acp: ${terminalText(line)}\n`);
  const server = await serveAcp({
    host: createHost(paths, store, frontEnd, settings.model, log),
    input: Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
    output: Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    version,
    log,
  });
  let signalled: keyof typeof EXIT_FOR | undefined;
  const handlers = (Object.keys(EXIT_FOR) as (keyof typeof EXIT_FOR)[]).map((signal) => {
    const handler = () => {
      // A second Ctrl-C does not wait for turns to be stored.
      if (signalled === "SIGINT" && signal === "SIGINT") process.exit(EXIT_FOR.SIGINT);
      signalled ??= signal;
      server.stop();
    };
    process.on(signal, handler);
    return () => process.off(signal, handler);
  });
  try {
    await server.done;
  } finally {
    for (const off of handlers) off();
    process.stdin.destroy();
  }
  return signalled ? EXIT_FOR[signalled] : 0;
}

/** One session engine per ACP session, over the one store; sessions are Keen's own (ids, storage, settings). */
function createHost(paths: KeenPaths, store: SessionStore, frontEnd: FrontEndSettings, model: string | undefined, log: (line: string) => void): SessionHost {
  return {
    async open(request) {
      let meta: SessionMeta | undefined;
      if (request.load !== undefined) {
        meta = await store.resolve(request.load).catch((error) => {
          if (error instanceof UnknownSessionError) return undefined;
          throw error;
        });
        // ACP session ids are exact: a prefix that happens to match is not the session asked for.
        if (meta?.id !== request.load) return undefined;
      }
      const id = meta?.id ?? newSessionId();
      const cwd = resolve(meta?.cwd ?? request.cwd);
      const prepare = createPreparer(paths, { ...frontEnd, files: request.files?.(id), mcpServers: request.mcpServers });
      // Config errors (no provider, no such directory) fail this request, not the process.
      const setup = await prepare({ id, cwd, model: model ?? meta?.model });
      const bus = new EventBus((error) => log(`an output failed: ${String(error)}`));
      bus.subscribe(createStderrReporter((line) => void process.stderr.write(line)));
      const engine = createSessionEngine({
        store, bus, headless: false, interactive: true, cwd, permissionMode: setup.permissionMode ?? "ask", redactor: setup.redactor,
        prepare, checkModel: (ref) => checkModel(paths, cwd, ref), listModels: () => listModels(setup.config, undefined),
        retry: DEFAULT_RETRY, newId: newSessionId, initial: { id, meta, cwd, model },
      });
      return {
        client: engine, id, cwd, model: setup.modelRef, mode: setup.permissionMode ?? "ask",
        // What the engine's setup supports: its file restorer (absent when the editor owns the files), Keen's own loop (compaction).
        offers: { undo: Boolean(setup.checkFile && setup.restoreFile), compact: !setup.backend },
        async close() {
          engine.stop("shutdown");
          await engine.close();
          await prepare.close();
        },
      };
    },
    async list(cwd) {
      const all = await store.list();
      return all.filter((s) => !cwd || s.cwd === cwd).map((s) => ({ id: s.id, cwd: s.cwd, title: s.title, updated: s.updated }));
    },
  };
}
