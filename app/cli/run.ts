import type { RunResult } from "../../protocol/result.js";
import type { StopReason } from "../agent/verdict.js";
import { createJsonOutput, createSessionNote, createStderrReporter, createTextOutput } from "../headless/final-output.js";
import { createLiveTextOutput } from "../headless/live-text.js";
import { createJsonlWriter } from "../headless/jsonl-writer.js";
import { createStreamSink } from "../headless/sink.js";
import { BinaryStdinError, readPrompt } from "../headless/stdin.js";
import { ExitError, UsageError } from "./errors.js";
import { openHost } from "./host.js";
import { deferredPreconnect } from "../providers/preconnect.js";
import { traceRequests, traceStartup } from "../startup-trace.js";
import { validateRunFlags, type RunFlags, type RunSettings } from "./run-flags.js";
import { exitCodeForResult, handleStops } from "./signals.js";

/**
 * `keen run`: one turn, non-interactive — a client of the session engine that
 * sends one `prompt`, then `shutdown`. Everything that can fail before the
 * run starts is checked before a session is created or claimed, so a usage
 * error never leaves a half-written session. Returns the exit code.
 */
export async function runCommand(args: string[], flags: RunFlags, formatGiven: boolean): Promise<number> {
  const started = Date.now();
  traceStartup("run: command parsed");
  const settings = validateRunFlags(flags, formatGiven);
  if (settings.permissionMode === "ask") {
    throw new UsageError("--permission-mode ask needs someone to answer: use `keen stdio` or the TUI (`keen`), or accept-edits / read-only here");
  }
  // A prompt on stdin alone may turn out empty (a usage error): then the provider's connection waits until it is read.
  const deferred = deferredPreconnect();
  const waitForPrompt = args.join(" ").trim() === "";
  const host = await openHost("run", { ...settings, startedAt: started, ...(waitForPrompt ? { preconnect: deferred.preconnect } : {}) });
  const session = await host.open(await host.start({ session: settings.session, continue: settings.continueLast }));
  const { engine, setup } = session;
  let prompt: string;
  try {
    prompt = await promptOf(args, settings, setup.config.stdinGraceMs, host.cassette?.replay?.prompt);
    refuseOversized(prompt, setup.modelRef, setup.contextWindow);
    deferred.release();
  } catch (error) {
    // Refused before any turn: the setup's helpers (MCP servers) end with the engine.
    await session.close();
    throw error;
  }

  const control = createRunControl(settings.timeoutMs, engine.stop, started);
  const sink = createStreamSink(process.stdout, () => control.stop("epipe"));
  engine.subscribe(createStderrReporter());
  if (settings.output === "jsonl") engine.subscribe(createJsonlWriter(sink, { deltas: settings.deltas }));
  else if (settings.output === "json") engine.subscribe(createJsonOutput(sink));
  else {
    // Chosen once: a person at a terminal watches the answer arrive; a pipe gets the final text only.
    if (process.stdout.isTTY) engine.subscribe(createLiveTextOutput(sink, { note: (line) => process.stderr.write(line) }));
    else engine.subscribe(createTextOutput(sink));
    engine.subscribe(createSessionNote(process.stderr.isTTY === true));
  }
  let result: RunResult | undefined;
  let refused: string | undefined;
  let firstDelta = true;
  engine.subscribe((event) => {
    // After the writers above: the first delta has been handed to stdout.
    if (firstDelta && event.kind === "text-delta") {
      firstDelta = false;
      traceStartup("run: first delta written");
    }
    if (event.kind === "result") result = event;
    if (event.kind === "response" && event.command === "prompt" && !event.ok) refused = event.error;
  });
  traceRequests();
  traceStartup("run: prompt sent to the engine");
  try {
    engine.send({ kind: "prompt", text: prompt });
    engine.send({ kind: "shutdown" });
    await engine.done;
    if (refused) throw new ExitError(refused, 1);
    await sink.flush();
    return control.exitCode(result);
  } finally {
    control.dispose();
    await session.close();
  }
}

/** The prompt: the message and piped stdin, else a replay's recorded one; a usage error when empty. */
async function promptOf(args: string[], settings: RunSettings, graceMs: number | undefined, recorded: string | undefined): Promise<string> {
  const read = await readPrompt(args, {
    skip: !settings.stdin, graceMs: graceMs ?? 3000, timeoutMs: settings.timeoutMs, allowBinary: settings.binaryStdin,
  }).catch((error: unknown) => {
    throw error instanceof BinaryStdinError ? new UsageError(error.message) : error;
  });
  if (read.note) process.stderr.write(`${read.note}\n`);
  // A replay without a prompt replays the recorded one.
  const prompt = read.prompt.trim() ? read.prompt : (recorded ?? read.prompt);
  if (!prompt.trim()) throw new UsageError('empty prompt: pass a message (keen run "…") or pipe one on stdin');
  return prompt;
}

/**
 * A prompt that cannot fit the model's window is refused before any request:
 * about 4 characters a token for English and code, so the estimate errs
 * towards letting a borderline prompt through to the provider's exact count.
 */
function refuseOversized(prompt: string, modelRef: string, window: number): void {
  const tokens = Math.ceil(prompt.length / 4);
  if (tokens <= window) return;
  const n = (x: number) => x.toLocaleString("en-US");
  throw new UsageError(
    `the prompt is too large for ${modelRef}: ${n(prompt.length)} characters ≈ ${n(tokens)} tokens, its context window is ${n(window)} tokens; send less (or a model with a larger window)`,
  );
}

/**
 * A one-shot run's outside stops: the signals (app/cli/signals.ts), `--timeout`
 * and a vanished stdout reader each stop the engine's turn once, which then
 * stores what it produced. A failed store write stops the turn too, from
 * inside the engine (StopReason "store").
 */
export function createRunControl(timeoutMs: number | undefined, stop: (reason: StopReason, message?: string) => void, startedAt = Date.now()) {
  const stops = handleStops(stop);
  // The timeout counts from the start of the run, waiting for the prompt on stdin included.
  const timer = timeoutMs
    ? setTimeout(() => stops.stop("timeout", `timed out after ${(timeoutMs / 1000).toFixed(1)}s`), Math.max(1, startedAt + timeoutMs - Date.now()))
    : undefined;
  return {
    stop: stops.stop,
    /** The exit code for the run's result, given what stopped it. */
    exitCode: (result: RunResult | undefined): number => exitCodeForResult(result, stops.reason),
    dispose() {
      clearTimeout(timer);
      stops.dispose();
    },
  };
}
