import { resolve } from "node:path";
import { EventBus } from "../../protocol/bus.js";
import { newSessionId } from "../../storage/ids.js";
import { openStore } from "../../storage/level-store.js";
import { createSessionEngine } from "../agent/engine.js";
import { DEFAULT_RETRY } from "../agent/retry.js";
import type { StopReason } from "../agent/verdict.js";
import { readCommands } from "../headless/command-reader.js";
import { createStderrReporter } from "../headless/final-output.js";
import { createJsonlWriter } from "../headless/jsonl-writer.js";
import { createStreamSink } from "../headless/sink.js";
import { keenPaths } from "./config.js";
import { checkModel, createPreparer, listModels, runSessionChoice, storedSession } from "./engine-setup.js";
import { storedRunner } from "./cli-runner-setup.js";
import { loadOutputSchema } from "./output-schema.js";
import type { RunSettings } from "./run-flags.js";

const EXIT_FOR: Partial<Record<StopReason, number>> = { sigint: 130, sigterm: 143, sighup: 129 };

/**
 * `keen stdio` (`keen run --headless --input-format jsonl`): the two-way
 * protocol. Commands arrive on stdin, one JSON object per line; events leave
 * on stdout through the same JSONL writer as `keen run --headless
 * --stream-deltas`, plus `permission-request` and `response`. The process
 * lives between turns; it exits 0 on `shutdown`, or on stdin EOF once the
 * running turn (and any queued prompt) has ended and its `result` is written.
 * Every command read before EOF is answered before the process exits.
 * `--timeout` bounds each turn, never the wait for the next command.
 * `set-permission-mode` never goes wider than `--permission-mode`, else the
 * user config's mode (an unset mode leaves the client free, as the TUI is).
 */
export async function stdioCommand(settings: RunSettings): Promise<number> {
  const paths = keenPaths();
  const store = openStore(paths.dataDir);
  const meta = await storedSession(store, runSessionChoice(settings));
  // Loaded only with --record/--replay: a plain run, and the start-up snapshot, never carry the cassette machinery.
  const cassette = settings.cassette ? (await import("./cassette-setup.js")).openCassette(settings.cassette, paths) : undefined;
  const cwd = resolve(settings.cwd ?? meta?.cwd ?? cassette?.replay?.demoWorkspace?.() ?? process.cwd());
  const outputSchema = settings.outputSchema ? await loadOutputSchema(resolve(settings.outputSchema)) : undefined;
  const prepare = createPreparer(paths, {
    allowedTools: settings.allowedTools, disallowedTools: settings.disallowedTools, maxTurns: settings.maxTurns, outputSchema, headless: true,
    // Replaying, as in keen run: the flag, else the replay's mode (ask; the demo: auto), never the config's.
    permissionMode: settings.permissionMode ?? (cassette?.replay ? (cassette.replay.mode ?? "ask") : undefined), defaultMode: "ask", cassette,
    runner: settings.runner, runnerOf: (id) => storedRunner(store, id), mcpConfig: settings.mcpConfig, sandbox: settings.sandbox,
  });
  const initial = { id: meta?.id ?? newSessionId(), meta, cwd, model: settings.model };
  // Usage errors (no provider, bad config, unknown tools) end the process before it reads a command.
  const setup = await prepare({ id: initial.id, cwd, model: initial.model ?? meta?.model });

  // The mode the user started this process with is the widest a client on stdin may set; a replay's own mode is only a default.
  const userMode = cassette?.replay ? undefined : setup.config.userLimits.permissionMode;
  const modeCeiling = settings.permissionMode ? { mode: settings.permissionMode, source: "--permission-mode" }
    : userMode ? { mode: userMode, source: `permissionMode in ${paths.configFile}` } : undefined;

  const bus = new EventBus((error) => process.stderr.write(`keen: an output failed: ${String(error)}\n`));
  const engine = createSessionEngine({
    store, bus, headless: true, cwd, permissionMode: setup.permissionMode ?? "ask", modeCeiling, interactive: true, redactor: setup.redactor,
    prepare, checkModel: (ref) => checkModel(paths, cwd, ref, process.env, cassette),
    listModels: () => listModels(setup.config),
    retry: DEFAULT_RETRY, turnTimeoutMs: settings.timeoutMs, newId: newSessionId, initial,
  });
  const sink = createStreamSink(process.stdout, () => {
    engine.stop("epipe");
    void engine.close();
  });
  bus.subscribe(createStderrReporter());
  bus.subscribe(createJsonlWriter(sink, { deltas: true, control: true }));

  let signalled: StopReason | undefined;
  const onSignal = (reason: StopReason) => () => {
    if (signalled === "sigint" && reason === "sigint") process.exit(130);
    signalled ??= reason;
    engine.stop(reason);
    void engine.close();
  };
  const handlers: [NodeJS.Signals, () => void][] = [
    ["SIGINT", onSignal("sigint")], ["SIGTERM", onSignal("sigterm")], ["SIGHUP", onSignal("sighup")],
  ];
  for (const [signal, handler] of handlers) process.on(signal, handler);
  readCommands(process.stdin, {
    command: (command) => engine.send(command),
    invalid: (message, id) => engine.reject(message, id),
    end: () => void engine.close(),
  });
  try {
    await engine.done;
    await sink.flush();
  } finally {
    for (const [signal, handler] of handlers) process.off(signal, handler);
    process.stdin.destroy();
    await prepare.close();
  }
  return signalled ? (EXIT_FOR[signalled] ?? 1) : 0;
}
