import { resolve } from "node:path";
import { EventBus } from "../../protocol/bus.js";
import type { RunResult } from "../../protocol/result.js";
import { newSessionId } from "../../storage/ids.js";
import { openStore } from "../../storage/level-store.js";
import { createSessionEngine } from "../agent/engine.js";
import { DEFAULT_RETRY } from "../agent/retry.js";
import { createJsonOutput, createSessionNote, createStderrReporter, createTextOutput } from "../headless/final-output.js";
import { createLiveTextOutput } from "../headless/live-text.js";
import { createJsonlWriter } from "../headless/jsonl-writer.js";
import { createStreamSink } from "../headless/sink.js";
import { BinaryStdinError, readPrompt } from "../headless/stdin.js";
import { keenPaths } from "./config.js";
import { createPreparer, listModels, runSessionChoice, storedSession } from "./engine-setup.js";
import { storedRunner } from "./cli-runner-setup.js";
import { ExitError, UsageError } from "./errors.js";
import { loadOutputSchema } from "./output-schema.js";
import { validateRunFlags, type RunFlags } from "./run-flags.js";
import { createRunControl } from "./run-control.js";

/**
 * `keen run`: one turn, non-interactive — a client of the session engine that
 * sends one `prompt`, then `shutdown`. Everything that can fail before the
 * run starts is checked before a session is created or claimed, so a usage
 * error never leaves a half-written session. Returns the exit code.
 */
export async function runCommand(args: string[], flags: RunFlags, formatGiven: boolean): Promise<number> {
  const started = Date.now();
  const settings = validateRunFlags(flags, formatGiven);
  if (settings.permissionMode === "ask") {
    throw new UsageError("--permission-mode ask needs someone to answer: use `keen stdio` or the TUI (`keen`), or accept-edits / read-only here");
  }
  const paths = keenPaths();
  const store = openStore(paths.dataDir);
  const meta = await storedSession(store, runSessionChoice(settings));
  // Loaded only with --record/--replay: a plain run, and the start-up snapshot, never carry the cassette machinery.
  const cassette = settings.cassette ? (await import("./cassette-setup.js")).openCassette(settings.cassette, paths) : undefined;
  const replay = cassette?.replay;
  const demo = (settings.cwd ?? meta?.cwd) ? undefined : replay?.demoWorkspace?.();
  if (demo) process.stderr.write(`keen: replaying the demo in ${demo}\n`);
  const cwd = resolve(settings.cwd ?? meta?.cwd ?? demo ?? process.cwd());
  const outputSchema = settings.outputSchema ? await loadOutputSchema(resolve(settings.outputSchema)) : undefined;
  // A replay's tools really run on this workspace: read-only unless --permission-mode says otherwise, whatever
  // the config says (the demo runs auto in its own workspace); the flag-level value still only narrows to a project's.
  const prepare = createPreparer(paths, {
    allowedTools: settings.allowedTools, disallowedTools: settings.disallowedTools, maxTurns: settings.maxTurns, outputSchema, headless: true,
    permissionMode: settings.permissionMode ?? (replay ? (replay.mode ?? "read-only") : undefined), defaultMode: "auto", cassette,
    runner: settings.runner, runnerOf: (id) => storedRunner(store, id), mcpConfig: settings.mcpConfig, sandbox: settings.sandbox,
  });
  const initial = { id: meta?.id ?? newSessionId(), meta, cwd, model: settings.model };
  const setup = await prepare({ id: initial.id, cwd, model: initial.model ?? meta?.model });
  const read = await readPrompt(args, {
    skip: !settings.stdin, graceMs: setup.config.stdinGraceMs ?? 3000, timeoutMs: settings.timeoutMs, allowBinary: settings.binaryStdin,
  }).catch((error: unknown) => {
    throw error instanceof BinaryStdinError ? new UsageError(error.message) : error;
  });
  if (read.note) process.stderr.write(`${read.note}\n`);
  // A replay without a prompt replays the recorded one.
  const prompt = read.prompt.trim() ? read.prompt : (replay?.prompt ?? read.prompt);
  if (!prompt.trim()) throw new UsageError('empty prompt: pass a message (keen run "…") or pipe one on stdin');
  refuseOversized(prompt, setup.modelRef, setup.contextWindow);

  const bus = new EventBus((error) => process.stderr.write(`keen: an output failed: ${String(error)}\n`));
  const engine = createSessionEngine({
    store, bus, headless: true, cwd, permissionMode: setup.permissionMode ?? "auto", interactive: false, redactor: setup.redactor,
    prepare, checkModel: () => {
      throw new Error("keen run does not change models mid-run");
    },
    listModels: () => listModels(setup.config),
    retry: DEFAULT_RETRY, newId: newSessionId, initial, startedAt: started,
  });
  const control = createRunControl(settings.timeoutMs, engine.stop, started);
  const sink = createStreamSink(process.stdout, () => control.stop("epipe"));
  bus.subscribe(createStderrReporter());
  if (settings.output === "jsonl") bus.subscribe(createJsonlWriter(sink, { deltas: settings.deltas }));
  else if (settings.output === "json") bus.subscribe(createJsonOutput(sink));
  else {
    // Chosen once: a person at a terminal watches the answer arrive; a pipe gets the final text only.
    if (process.stdout.isTTY) bus.subscribe(createLiveTextOutput(sink, { note: (line) => process.stderr.write(line) }));
    else bus.subscribe(createTextOutput(sink));
    bus.subscribe(createSessionNote(process.stderr.isTTY === true));
  }
  let result: RunResult | undefined;
  let refused: string | undefined;
  bus.subscribe((event) => {
    if (event.kind === "result") result = event;
    if (event.kind === "response" && event.command === "prompt" && !event.ok) refused = event.error;
  });
  try {
    engine.send({ kind: "prompt", text: prompt });
    engine.send({ kind: "shutdown" });
    await engine.done;
    if (refused) throw new ExitError(refused, 1);
    await sink.flush();
    return control.exitCode(result);
  } finally {
    control.dispose();
    await prepare.close();
  }
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
