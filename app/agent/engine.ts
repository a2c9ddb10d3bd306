import { type Command, type CommandId, type CommandOf, type PermissionMode } from "../../protocol/commands.js";
import type { EventDraft, KeenEvent } from "../../protocol/events.js";
import { createRecorder, type Recorder } from "../../storage/recorder.js";
import { errorCodeOf, type ErrorCode } from "../../protocol/errors.js";
import type { SessionStatus } from "../../storage/store.js";
import { stricterMode } from "../permissions/policy.js";
import { claimSession, countStored, loadSession, type CurrentSession } from "./engine-session.js";
import { createCommandOrder } from "./command-order.js";
import { attachNews, createSetups } from "./engine-setups.js";
import { readyPrompt, runClaimedTurn, type ReadyPrompt } from "./engine-turn.js";
import type { EngineOptions, EngineSetup, SessionEngine } from "./engine-types.js";
import { createPermissionGate } from "./permission-gate.js";
import type { EngineContext } from "./engine-context.js";
import { compact, rewind, shell, undo } from "./held-commands.js";
import { fork, listSessionCheckpoints, listSessions, newSession, resume } from "./session-commands.js";
import { killJob } from "./job-commands.js";
import { fromSetup, listModels, setModel, setPermissionMode } from "./setting-commands.js";
import type { StopReason } from "./verdict.js";

export type { EngineOptions, EngineSetup, ModelChoice, SessionEngine } from "./engine-types.js";

/** Commands that act at once, not after the ones sent before them. */
const URGENT = new Set(["interrupt", "permission-response", "kill-job"]);

/**
 * The session engine: commands in, events out. It owns the session (create,
 * claim while a turn runs, release), history, the prompt queue, abort, the
 * permission flow, the verdict and each turn's `result`. Contract: `send`
 * never throws; every command gets exactly one `response`, also when the
 * engine closes right after it; commands take effect in the order they were
 * sent (a `prompt` after a `resume-session` runs in the resumed session),
 * except `interrupt`, `permission-response` and `kill-job`, which act at once even while
 * an earlier command is still being handled. A prompt is answered when its
 * turn ends, so responses may come in another order than their commands. A
 * claim is held only while a turn runs, so another process may continue the
 * session between turns, and the next turn re-reads (and re-emits) what it
 * appended.
 */
export function createSessionEngine(options: EngineOptions): SessionEngine {
  const { store, bus } = options;
  const diagnose = options.diagnose ?? ((line: string) => void process.stderr.write(`keen: ${line}\n`));
  let session: CurrentSession = options.initial
    ? { ...options.initial, started: false, seen: 0 }
    : { id: options.newId(), cwd: options.cwd, started: false, seen: 0 };
  const setups = createSetups(options.prepare, diagnose, (setup) => {
    // A mode the user chose in this process holds across sessions; a project config only tightens it.
    const mode = stricterMode(chosenMode ?? setup.permissionMode ?? gate.mode, setup.projectMode);
    if (mode) gate.mode = mode;
    gate.bashConfined = setup.sandbox?.bashConfined ?? false;
  });
  const setupFor = (current: CurrentSession) => setups.for(current);
  let recorder: Recorder | undefined;
  let running: { controller: AbortController; stop?: { reason: StopReason; message?: string } } | undefined;
  const queue: CommandOf<"prompt">[] = [];
  let closing = false;
  /** close() was called: prompts sent from now on are refused (those sent before it still run). */
  let closeRequested = false;
  let closed = false;
  const order = createCommandOrder();
  /** How many interrupts were sent: a prompt sent before the latest one never starts. */
  let interrupts = 0;
  let pump: Promise<void> | undefined;
  let early: { reason: StopReason; message?: string } | undefined;
  /** A turn is preparing and claiming its session: an interrupt now stops it as soon as it runs. */
  let starting = false;
  /** From a prompt's dequeue to just before its response (the session is released by then). */
  let turning = false;
  /** A manual compaction or the user's shell command holds the session: prompts wait for it. */
  let compacting: Promise<void> | undefined;
  let chosenMode: PermissionMode | undefined;
  let firstStart = options.startedAt;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));

  /**
   * Writes of events between turns, in order: a job ends between turns too (it exits, or a kill-job or the
   * engine's end stops it) and is stored all the same, so a resumed session does not show it running. Appends
   * need no claim (the store orders them). Events emitted while one is written wait for it, so the order
   * stays (a kill-job's answer after its job's end); a turn's claim and the engine's end wait too.
   */
  let outsideTail: Promise<void> = Promise.resolve();
  let outsidePending = 0;
  const outsideWritten = () => outsideTail;
  const emit = async (draft: EventDraft): Promise<void> => {
    let event = { ...draft, conversation_id: session.id, ts: Date.now() } as KeenEvent;
    const redactor = redactorNow();
    if (redactor) event = redactor.redactDeep(event);
    if (recorder) {
      countStored(session, event);
      // Storage first: what a reader saw on stdout is already in the store.
      await recorder.subscriber(event);
    } else if ((event.kind === "job" && session.meta) || outsidePending) {
      const stored = event.kind === "job" && session.meta ? event : undefined;
      const write = outsideTail.then(() => stored && store.append(session.id, [stored]).then(
        () => countStored(session, stored),
        (error) => diagnose(`could not store a job's end: ${messageOf(error)}`),
      ));
      outsideTail = write;
      outsidePending++;
      try {
        await write;
      } finally {
        outsidePending--;
      }
    }
    await bus.emit(event);
  };
  const respond = (command: { kind: string; id?: CommandId }, ok: boolean, extra: { error?: string; error_code?: ErrorCode; data?: unknown } = {}) =>
    emit({ kind: "response", ...(command.id !== undefined ? { id: command.id } : {}), command: command.kind, ok, ...extra });
  /** A failed answer: the text for people, the code for programs (protocol/responses.ts). */
  const refuse = (command: { kind: string; id?: CommandId }, code: ErrorCode, error: string, data?: unknown) =>
    respond(command, false, { error, error_code: code, ...(data !== undefined ? { data } : {}) });
  const refuseError = (command: { kind: string; id?: CommandId }, error: unknown, fallback?: ErrorCode) =>
    refuse(command, errorCodeOf(error, fallback), messageOf(error));
  const gate = createPermissionGate({ mode: options.permissionMode, interactive: options.interactive, emit, newId: options.newId });
  /** What the command handlers outside this file see of the engine (engine-context.ts). */
  const ctx: EngineContext = {
    store, options, gate, emit, respond, refuse, refuseError, active, setupFor, holdSession,
    peekSetup: (current) => setups.peek(current),
    latestSetup: () => setups.latest,
    chooseMode(mode) {
      chosenMode = mode;
      gate.mode = mode;
    },
    get session() {
      return session;
    },
    switchSession: (next) => void (session = next),
    replay: (event) => bus.emit({ ...event, replay: true }),
    flush: () => recorder?.flush(),
  };

  function send(command: Command): void {
    if (command.kind === "prompt" && closeRequested) return void answerSafely(command, () => refuse(command, "shutting_down", "the engine is shutting down"));
    if (command.kind === "interrupt") interrupts++;
    // An interrupt acts at once, so it may overtake a prompt sent before it that still waits for
    // earlier commands: that prompt is dropped, as a queued one is.
    const sentAfter = interrupts;
    const dropped = () => interrupts !== sentAfter;
    ordered(command, () => (command.kind === "prompt" && dropped() ? refuse(command, "interrupted", "dropped: the turn was interrupted") : handle(command)));
  }

  /**
   * Handles a command after the ones sent before it; interrupt, permission-response and kill-job at once (a job
   * belongs to no session state the others change, and a user stopping a runaway server must not wait behind them).
   */
  function ordered(command: { kind: string; id?: CommandId }, work: () => Promise<void>): void {
    order.run(() => answerSafely(command, work), URGENT.has(command.kind));
  }

  /** Runs a command's handler; a handler that fails answers its command with the error. Never rejects. */
  function answerSafely(command: { kind: string; id?: CommandId }, work: () => Promise<void>): Promise<void> {
    return work()
      .catch((error) => refuseError(command, error))
      .catch((error) => diagnose(`could not answer a ${command.kind} command: ${messageOf(error)}`));
  }

  async function handle(command: Command): Promise<void> {
    if (closed) return void (await refuse(command, "shutting_down", "the engine has shut down"));
    switch (command.kind) {
      case "prompt":
        if (closing) return refuse(command, "shutting_down", "the engine is shutting down");
        // A custom command may take no arguments: its template is the prompt.
        if (!command.text.trim() && !command.command && !command.images?.length) return refuse(command, "empty_prompt", "empty prompt");
        queue.push(command);
        pump ??= drain();
        return;
      case "interrupt": {
        const dropped = queue.splice(0);
        for (const prompt of dropped) await refuse(prompt, "interrupted", "dropped: the turn was interrupted");
        const was = Boolean(running);
        // Idle, there is nothing to stop: a stale interrupt must not stop the next prompt's turn.
        if (running || starting) stop("interrupt");
        return respond(command, true, { data: { interrupted: was } });
      }
      case "permission-response": {
        const error = gate.answer(command);
        return error ? refuse(command, "no_request", error) : respond(command, true);
      }
      case "set-permission-mode":
        return setPermissionMode(ctx, command);
      case "set-model":
        return setModel(ctx, command);
      case "new-session":
        return newSession(ctx, command);
      case "resume-session":
        return resume(ctx, command);
      case "list-sessions":
        return listSessions(ctx, command);
      case "list-models":
        return listModels(ctx, command);
      case "list-files":
        return fromSetup(ctx, command, (p) => p.listFiles?.(command.query ?? "", command.limit ?? 50), "this session cannot list its files");
      case "list-commands":
        return fromSetup(ctx, command, (p) => p.listCommands?.(), "this session's runner has no custom commands");
      case "list-skills":
        return fromSetup(ctx, command, (p) => p.listSkills?.(), "this session's runner has no skills");
      case "compact":
        return compact(ctx, command);
      case "undo":
        return undo(ctx, command);
      case "shell":
        return shell(ctx, command);
      case "list-checkpoints":
        return listSessionCheckpoints(ctx, command);
      case "rewind":
        return rewind(ctx, command);
      case "fork-session":
        return fork(ctx, command);
      case "kill-job":
        return killJob(ctx, command);
      case "shutdown":
        // Ordered: every command sent before it has been handled; prompts among them still run to their end.
        closing = true;
        await idle();
        await order.urgentSettled();
        await respond(command, true);
        return finish();
    }
  }

  /**
   * Runs `body` with the idle session held like a turn, for work between turns (compaction, the user's shell
   * command): prompts wait for it, the session is claimed in the store (created when new, titled by `label`),
   * what another process appended is re-emitted, a recorder stores what `body` emits (a store that fails
   * aborts `signal`: nothing is half stored), and the session is released with the status its last turn left,
   * because such work does not change how that turn ended. `admit` may refuse (answering its command) before
   * anything is claimed.
   */
  async function holdSession(
    current: CurrentSession,
    label: string,
    admit: (prepared: EngineSetup) => Promise<boolean>,
    body: (prepared: EngineSetup, loaded: Awaited<ReturnType<typeof loadSession>>, signal: AbortSignal) => Promise<void>,
  ): Promise<void> {
    let finished!: () => void;
    compacting = new Promise<void>((resolve) => (finished = resolve));
    try {
      const prepared = await setupFor(current);
      if (!(await admit(prepared))) return;
      // The meta a turn of this process created still says `running`: read the stored status.
      const stored = current.meta ? await store.resolve(current.id).then((meta) => meta.status, () => current.meta!.status) : "success";
      const before: SessionStatus = stored === "running" ? "success" : stored;
      await claim(current, label, prepared.modelRef);
      const controller = new AbortController();
      running = { controller };
      recorder = createRecorder(store, current.id, { onFailure: () => controller.abort(new Error("store")) });
      try {
        const loaded = await loadSession(store, current);
        for (const event of loaded.appended) await bus.emit({ ...event, replay: true });
        await body(prepared, loaded, controller.signal);
      } finally {
        running = undefined;
        const flushing = recorder;
        recorder = undefined;
        await flushing.flush().catch((error) => diagnose(`could not store the session: ${messageOf(error)}`));
        await store.release(current.id, before).catch(() => {});
      }
    } finally {
      compacting = undefined;
      finished();
    }
  }

  async function drain(): Promise<void> {
    try {
      while (compacting) await compacting;
      while (queue.length && !closed) {
        const prompt = queue.shift()!;
        turning = true;
        // A turn that fails outside the loop's own contract (a store that cannot be read) still answers its prompt.
        await turn(prompt).catch((error) => ((turning = false), refuseError(prompt, error)));
        turning = false;
      }
    } finally {
      pump = undefined;
    }
  }

  async function turn(prompt: CommandOf<"prompt">): Promise<void> {
    const started = firstStart ?? Date.now();
    firstStart = undefined;
    const current = session;
    const wasStored = Boolean(current.meta);
    starting = true;
    let ready: ReadyPrompt;
    try {
      ready = await readyPrompt(ctx, prompt, current);
      await claim(current, ready.text, ready.prepared.modelRef);
    } catch (error) {
      starting = false;
      early = undefined;
      turning = false;
      return refuseError(prompt, error);
    }
    starting = false;
    const controller = new AbortController();
    running = { controller };
    if (early) {
      stop(early.reason, early.message);
      early = undefined;
    }
    const timer = options.turnTimeoutMs
      ? setTimeout(() => stop("timeout", `timed out after ${(options.turnTimeoutMs! / 1000).toFixed(1)}s`), options.turnTimeoutMs)
      : undefined;
    // A failed store write stops the turn before anything happens that could not be recorded.
    recorder = createRecorder(store, current.id, { onFailure: (error) => stop("store", messageOf(error)) });
    let status: SessionStatus = "interrupted";
    let answer: { session_id: string; status: string } | undefined;
    try {
      ({ status, answer } = await runClaimedTurn(ctx, { ready, current, wasStored, started, signal: controller.signal, stopped: () => running?.stop }));
    } finally {
      clearTimeout(timer);
      const stopped = running?.stop;
      running = undefined;
      const flushing = recorder;
      recorder = undefined;
      // One line at most for a store failure the turn did not already report (the result line's own write, the release).
      let reported = stopped?.reason === "store";
      const report = (error: unknown) => {
        if (!reported) diagnose(messageOf(error));
        reported = true;
      };
      await flushing.flush().catch(report);
      await store.release(current.id, status).catch(report);
    }
    // Answered once the claim is released: a client may hand the session to another process at once.
    turning = false;
    await respond(prompt, true, { data: answer });
  }

  /** The current setup's redactor (it knows the session's MCP secrets too), else the one the engine was given. */
  function redactorNow() {
    return setups.latest?.redactor ?? options.redactor;
  }

  /** Creates (and claims in the same write) or claims the session; a new one's title hides the secrets known now. */
  async function claim(current: CurrentSession, text: string, modelRef: string): Promise<void> {
    // The turn reads what others appended since `seen`: this process's own job events must be in first.
    await outsideWritten();
    const redactor = redactorNow();
    return claimSession(store, current, text, modelRef, redactor && ((line) => redactor.redact(line)));
  }

  function stop(reason: StopReason, message?: string): void {
    // keen run: a signal or timeout before its one turn has started still stops that turn.
    if (!running) return void (early ??= { reason, message });
    if (running.stop) return;
    running.stop = { reason, message };
    running.controller.abort(new Error(reason));
  }

  /**
   * A turn is starting, running or waiting, or a compaction holds the session: nothing may switch or
   * rewrite it now. A turn whose `result` is out no longer counts (it only stores and releases).
   */
  function active(): boolean {
    return Boolean(running || compacting) || starting || queue.length > 0;
  }

  /** Resolves once no turn runs and no prompt waits. */
  async function idle(): Promise<void> {
    while (pump) await pump;
  }

  /** Commands sent after this are answered "shut down"; `done` resolves once those already sent are answered. */
  function finish(): void {
    if (closed) return;
    closed = true;
    // What the last setup started (MCP servers) ends once every command is answered.
    void order.settled().then(() => setups.close()).then(outsideWritten).then(resolveDone);
  }

  async function close(): Promise<void> {
    closeRequested = true;
    // No permission-response can come any more: an open or later ask would keep the turn, and the process, waiting for ever.
    gate.endAnswers();
    // Commands sent before EOF are handled first: a prompt after a resume-session still runs.
    await order.settled();
    closing = true;
    await idle();
    await order.settled();
    finish();
    await done;
  }

  return {
    send,
    subscribe(listener) {
      const off = bus.subscribe(listener);
      // The session's setup is usually prepared by now (the front end prepared it to fail early); one that fails says so with the first prompt.
      if (options.earlyNews) void setupFor(session).then((prepared) => attachNews(prepared, emit), () => {});
      return off;
    },
    prepare: () => setupFor(session),
    stop,
    reject: (message, id) => ordered({ kind: "invalid", id }, () => refuse({ kind: "invalid", id }, "invalid", message)),
    close,
    done,
    get sessionId() {
      return session.id;
    },
    get busy() {
      return turning || queue.length > 0;
    },
    idle,
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
