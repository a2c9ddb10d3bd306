import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { PermissionMode } from "../../protocol/commands.js";
import type { KeenEvent } from "../../protocol/events.js";
import type { Message } from "../../protocol/messages.js";
import { addUsage, emptyUsage } from "../../protocol/usage.js";
import type { BackendTurnOptions, TurnBackend } from "./backend.js";
import { createCliTranslator, type CliResult } from "./cli-stream.js";
import { cliToolName } from "./cli-tools.js";
import { selectMaxStepsPrompt } from "./max-steps.js";
import { relayServerPath, startPermissionRelay, type PermissionRelay } from "./permission-relay.js";
import type { TurnOutcome } from "./turn.js";
import { typedText } from "./user-shell.js";
import type { ChangePreview } from "../permissions/requester.js";

/** How to run the external agent CLI (`agents.defaults.cli` in the user's config). */
export interface CliRunnerOptions {
  /** The `claude` executable: a name on PATH or a path. */
  path: string;
  /** Extra arguments after Keen's own. */
  flags: string[];
  /** Adds `--dangerously-skip-permissions`; `auto` maps to bypassPermissions only with it. */
  skipPermissions: boolean;
  /** Kills the CLI after this long and ends the turn as an error. */
  timeoutMs?: number;
  /** `<provider>/<model>`: the provider prefix is dropped. */
  model: string;
  /** Keen's `--max-turns`, passed on. */
  maxTurns?: number;
  /** Keen's `--allowed-tools` / `--disallowed-tools`, as the CLI's `--allowedTools` / `--disallowedTools` (names mapped). */
  allowedTools?: string[];
  disallowedTools?: string[];
  env?: NodeJS.ProcessEnv;
  /** The diff a Write or Edit ask of the CLI would make, for the permission prompt (relayed asks only). */
  preview?(tool: string, input: Record<string, unknown>): Promise<ChangePreview | undefined>;
  /** Tells the user something they should know (stderr). */
  notice?: (line: string) => void;
  /** Where skipped lines are reported (`KEEN_DEBUG`). */
  debug?: (line: string) => void;
}

const KILL_GRACE_MS = 2000;
/** How long an ask waits for its call's tool-use line (an ask for a call the CLI never printed is still asked). */
const TOOL_USE_GRACE_MS = 2000;
const STDERR_TAIL = 2000;

/**
 * The CLI runner: hands the whole turn (tools included) to `claude -p` in
 * stream-json mode and translates what it prints into Keen's events. The CLI
 * session id is stored on the turn's `turn-end`; the session's next CLI turn
 * resumes it with `--resume`. Contract: never throws; abort kills the CLI's
 * process group and ends the turn `interrupted`.
 */
export function createCliBackend(options: CliRunnerOptions): TurnBackend {
  return { name: "cli", run: (turn) => runCliTurn(options, turn) };
}

/** The CLI's arguments for one turn (the prompt goes to stdin). */
export function cliArgs(options: CliRunnerOptions, session: { resume?: string; id?: string }, mode: PermissionMode, relay: string[] = []): string[] {
  const args = ["-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages", "--model", cliModel(options.model)];
  if (session.resume) args.push("--resume", session.resume);
  else args.push("--session-id", session.id!);
  const cliMode = permissionModeFor(mode, options.skipPermissions);
  if (cliMode) args.push("--permission-mode", cliMode);
  if (options.skipPermissions) args.push("--dangerously-skip-permissions");
  if (options.maxTurns) args.push("--max-turns", String(options.maxTurns));
  if (options.allowedTools) args.push("--allowedTools", options.allowedTools.map(cliToolName).join(","));
  if (options.disallowedTools) args.push("--disallowedTools", options.disallowedTools.map(cliToolName).join(","));
  return [...args, ...relay, ...options.flags];
}

/** `anthropic/claude-sonnet-4-5` → `claude-sonnet-4-5`. */
export function cliModel(ref: string): string {
  const slash = ref.indexOf("/");
  return slash >= 0 ? ref.slice(slash + 1) : ref;
}

/** Keen's permission mode as the CLI's `--permission-mode`; undefined leaves the CLI's default. */
export function permissionModeFor(mode: PermissionMode, skipPermissions: boolean): string | undefined {
  switch (mode) {
    case "auto":
      return skipPermissions ? "bypassPermissions" : undefined;
    case "accept-edits":
      return "acceptEdits";
    case "read-only":
      return "plan";
    case "ask":
      return undefined;
  }
}

/**
 * The CLI session a session's last CLI turn stored, if any, and the directory it ran in (its process's session-start);
 * none after a rewind of the conversation (the events are the current, rewound history).
 */
export function storedCliSession(events: KeenEvent[]): { id: string; cwd?: string } | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    // The CLI's own session still holds the turns a rewind went back over: the next turn starts a new one.
    if (event.kind === "rewind" && event.conversation) return undefined;
    if (event.kind !== "turn-end" || !event.cli_session_id) continue;
    for (let j = i - 1; j >= 0; j--) {
      const start = events[j]!;
      if (start.kind === "session-start") return { id: event.cli_session_id, cwd: start.cwd };
    }
    return { id: event.cli_session_id };
  }
  return undefined;
}

/** A prompt that carries Keen's stored conversation to a new CLI session. */
function withConversation(history: Message[], prompt: string, cwd: string): string {
  const lines = history.flatMap((m) => {
    const text = m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n").trim();
    return text ? [`${m.role === "user" ? "User" : "Assistant"}: ${text}`] : [];
  });
  return `The conversation so far (it ran in ${cwd}):\n\n${lines.join("\n\n")}\n\n---\n\n${prompt}`;
}

async function runCliTurn(options: CliRunnerOptions, turn: BackendTurnOptions): Promise<TurnOutcome> {
  const { emit } = turn;
  const outcome: TurnOutcome = { status: "success", text: "", steps: 0, usage: emptyUsage(), errors: [], assistant: [] };
  await emit({ kind: "user-message", turn_id: turn.turnId, message: turn.user });
  const prompt = turn.user.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
  await emit({ kind: "text", role: "user", content: typedText(turn.user) });
  const previous = storedCliSession(turn.events);
  // `claude --resume` only finds sessions of the directory they ran in.
  const moved = previous?.cwd !== undefined && previous.cwd !== turn.cwd;
  const resume = moved ? undefined : previous?.id;
  const newId = resume ? undefined : randomUUID();
  // A new CLI session for a session with a history (moved, rewound, forked, or begun on another runner) gets its transcript.
  const input = moved ? withConversation(turn.history, prompt, previous!.cwd!) : !resume && turn.history.length ? withConversation(turn.history, prompt, turn.cwd) : prompt;
  if (moved) options.notice?.(`the session's CLI session ran in ${previous!.cwd}: starting a new one in ${turn.cwd} with the stored conversation`);
  // ask: the CLI asks about every call that needs it; accept-edits: it edits on its own and asks about the rest (bash).
  const asks = turn.permissionMode === "ask" || turn.permissionMode === "accept-edits";
  const translator = createCliTranslator(emit, options.debug, asks);
  let cliSession = resume ?? newId;
  const fail = async (message: string) => {
    outcome.status = "error";
    outcome.errors.push(message);
    await emit({ kind: "error", message, error_code: "runner" });
  };
  let relay: PermissionRelay | undefined;
  if (asks && !turn.signal.aborted) {
    // The CLI's asks come back to the engine's permission gate (and so to the front end's prompt).
    const serverPath = relayServerPath();
    if (serverPath) {
      relay = await startPermissionRelay({
        requester: turn.requester, signal: turn.signal, serverPath,
        before: (ask) => (ask.tool_use_id ? untilOrAfter(translator.toolUse(ask.tool_use_id), TOOL_USE_GRACE_MS) : Promise.resolve()),
        after: (ask, allow) => (ask.tool_use_id ? translator.decided(ask.tool_use_id, allow) : Promise.resolve()),
        ...(options.preview ? { preview: options.preview } : {}),
      }).catch(() => undefined);
    }
  }
  const relayArgs = relay?.args ?? [];
  // A person may take a while to answer: the CLI's MCP tool timeout must not deny for them.
  const spawnOptions = relay ? { ...options, env: { MCP_TOOL_TIMEOUT: "86400000", ...(options.env ?? process.env) } } : options;
  if (turn.signal.aborted) {
    outcome.status = "interrupted";
  } else if (asks && !relay) {
    await fail(`could not start the permission relay for ${turn.permissionMode} mode (dist/permission-relay.cjs missing, or no private socket): use --permission-mode auto or read-only`);
  } else {
    let run = await spawnCli(spawnOptions, cliArgs(options, { resume, id: newId }, turn.permissionMode, relayArgs), input, turn.cwd, turn.signal, translator.line);
    await translator.finish();
    cliSession = translator.sessionId ?? cliSession;
    let result = translator.result;
    if (result?.status === "max_turns" && !result.text && turn.user.headless && options.maxTurns && translator.sessionId && !turn.signal.aborted && !run.timedOut) {
      // Seed 001's promise: a headless turn ends with an answer. One more CLI turn, tools off, asks for the best guess.
      const final = selectMaxStepsPrompt({ step: options.maxTurns, maxSteps: options.maxTurns, headless: true })!;
      await emit({ kind: "prompt-injection", turn_id: turn.turnId, step: result.numTurns + 1, name: final.name, text: final.text });
      const limited = { ...options, maxTurns: 1, allowedTools: undefined, disallowedTools: translator.tools.length ? translator.tools : undefined };
      const first: CliResult = result;
      run = await spawnCli(spawnOptions, cliArgs(limited, { resume: translator.sessionId }, turn.permissionMode, relayArgs), final.text, turn.cwd, turn.signal, translator.line);
      await translator.finish();
      const second = translator.result;
      result = second && second !== first && second.status === "success" && second.text
        ? {
          ...second, status: "max_turns", numTurns: first.numTurns + second.numTurns, usage: addUsage(first.usage, second.usage),
          ...(first.costUsd !== undefined || second.costUsd !== undefined ? { costUsd: (first.costUsd ?? 0) + (second.costUsd ?? 0) } : {}),
        }
        : first;
    }
    if (turn.signal.aborted) {
      outcome.status = "interrupted";
      outcome.text = translator.text;
    } else if (run.timedOut) {
      await fail(`claude timed out after ${((options.timeoutMs ?? 0) / 1000).toFixed(1)}s and was stopped`);
    } else if (run.spawnError) {
      await fail(`could not run ${options.path}: ${run.spawnError}`);
    } else if (!result) {
      const tail = run.stderr.trim();
      await fail(`${options.path} exited with ${run.code === null ? `signal ${run.signal}` : `code ${run.code}`} without a result${tail ? `: ${tail}` : ""}`);
    } else {
      // A valid result decides, whatever the exit code.
      outcome.status = result.status;
      outcome.text = result.text;
      outcome.steps = result.numTurns;
      outcome.usage = result.usage;
      if (result.costUsd !== undefined) outcome.costUsd = result.costUsd;
      if (result.lastUsage) outcome.lastUsage = result.lastUsage;
      if (result.contextWindow) outcome.contextWindow = result.contextWindow;
      if (result.stopReason) outcome.stopReason = result.stopReason;
      if (result.status === "error") {
        outcome.errors.push(...result.errors);
        for (const message of result.errors) await emit({ kind: "error", message, error_code: "runner" });
      }
    }
  }
  await relay?.close();
  if (outcome.text) {
    // Stored so `sessions show` and a later embedded turn see the answer.
    const message: Message = { role: "assistant", content: [{ type: "text", text: outcome.text }] };
    outcome.assistant.push(message);
    await emit({ kind: "assistant-message", turn_id: turn.turnId, message, ...(outcome.stopReason ? { stop_reason: outcome.stopReason } : {}) });
  }
  await emit({
    kind: "turn-end", turn_id: turn.turnId, status: outcome.status, steps: outcome.steps,
    ...(outcome.stopReason ? { stop_reason: outcome.stopReason } : {}),
    runner: "cli", ...(cliSession && (translator.sessionId || resume) ? { cli_session_id: cliSession } : {}),
  });
  return outcome;
}

interface CliExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  timedOut: boolean;
  spawnError?: string;
}

/** Runs the CLI in its own process group, feeding each stdout line in order; abort and timeout kill the group. */
function spawnCli(
  options: CliRunnerOptions, args: string[], prompt: string, cwd: string, signal: AbortSignal, onLine: (line: string) => Promise<void>,
): Promise<CliExit> {
  return new Promise((resolve) => {
    const child = spawn(options.path, args, { cwd, env: options.env ?? process.env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    let timedOut = false;
    let spawnError: string | undefined;
    let buffered = "";
    let lines = Promise.resolve();
    let hardKill: NodeJS.Timeout | undefined;
    const kill = () => {
      if (child.pid === undefined || child.exitCode !== null) return;
      killGroup(child.pid, "SIGTERM");
      hardKill ??= setTimeout(() => killGroup(child.pid!, "SIGKILL"), KILL_GRACE_MS);
    };
    const onAbort = () => kill();
    signal.addEventListener("abort", onAbort, { once: true });
    const timer = options.timeoutMs ? setTimeout(() => ((timedOut = true), kill()), options.timeoutMs) : undefined;
    child.on("error", (error) => {
      spawnError = error.message;
      // A CLI that never started emits no close.
      if (child.pid === undefined) {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        resolve({ code: null, signal: null, stderr, timedOut, spawnError });
      }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(prompt);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split("\n");
      buffered = parts.pop()!;
      for (const part of parts) lines = lines.then(() => onLine(part)).catch(() => {});
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => (stderr = (stderr + chunk).slice(-STDERR_TAIL)));
    child.on("close", (code, exitSignal) => {
      clearTimeout(timer);
      clearTimeout(hardKill);
      signal.removeEventListener("abort", onAbort);
      // The group may still hold the CLI's own children (its tools).
      if (child.pid !== undefined) killGroup(child.pid, "SIGKILL");
      if (buffered) lines = lines.then(() => onLine(buffered)).catch(() => {});
      void lines.then(() => resolve({ code, signal: exitSignal, stderr, timedOut, ...(spawnError ? { spawnError } : {}) }));
    });
    if (signal.aborted) kill();
  });
}

function killGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // Already gone.
  }
}

/** `promise`, or nothing after `ms`: a bound, not a clock that orders events. */
function untilOrAfter(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]).finally(() => clearTimeout(timer));
}
