import { readCommands } from "../headless/command-reader.js";
import { createStderrReporter } from "../headless/final-output.js";
import { createJsonlWriter } from "../headless/jsonl-writer.js";
import { createStreamSink } from "../headless/sink.js";
import { openHost } from "./host.js";
import { UsageError } from "./errors.js";
import { validateRunFlags, type RunFlags, type RunSettings } from "./run-flags.js";
import { handleStops } from "./signals.js";

/** `keen run --headless --input-format jsonl`: the same as `keen stdio`, with run's flag checks. */
export async function stdioFromRun(message: string[], flags: RunFlags & { inputFormat?: string }, formatGiven: boolean): Promise<number> {
  if (!flags.headless) throw new UsageError("--input-format jsonl needs --headless (or use keen stdio)");
  if (message.length) throw new UsageError("--input-format jsonl reads prompts as commands on stdin; pass no message");
  return stdioFromFlags({ ...flags, streamDeltas: true }, formatGiven);
}

/** `keen stdio [flags]` */
export async function stdioFromFlags(flags: Omit<RunFlags, "stdin"> & { stdin?: boolean }, formatGiven = false, io?: StdioStreams): Promise<number> {
  const settings = validateRunFlags({ ...flags, stdin: true, headless: true, streamDeltas: true }, formatGiven);
  return stdioCommand(settings, io);
}

/** Where `keen stdio` reads commands and writes events: the process's own, or a test's streams (test/headless/stdio-eof.test.ts runs it in-process). */
export interface StdioStreams {
  stdin: NodeJS.ReadableStream & { destroy(): void };
  stdout: NodeJS.WritableStream;
}

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
export async function stdioCommand(settings: RunSettings, io: StdioStreams = { stdin: process.stdin, stdout: process.stdout }): Promise<number> {
  const host = await openHost("stdio", { ...settings, turnTimeoutMs: settings.timeoutMs });
  // Usage errors (no provider, bad config, unknown tools) end the process before it reads a command.
  const session = await host.open(await host.start({ session: settings.session, continue: settings.continueLast }));
  const { engine } = session;
  // A signal, or a reader gone from stdout: the running turn stops and is stored, then the process ends.
  const stops = handleStops((reason) => {
    engine.stop(reason);
    void engine.close();
  });
  const sink = createStreamSink(io.stdout, () => stops.stop("epipe"));
  engine.subscribe(createStderrReporter());
  engine.subscribe(createJsonlWriter(sink, { deltas: true, control: true }));
  readCommands(io.stdin, {
    command: (command) => engine.send(command),
    invalid: (message, id) => engine.reject(message, id),
    end: () => void engine.close(),
  });
  try {
    await engine.done;
    await sink.flush();
  } finally {
    stops.dispose();
    io.stdin.destroy();
    await session.close();
  }
  return stops.exitCode();
}
