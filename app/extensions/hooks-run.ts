import { spawn } from "node:child_process";
import type { HookEventName } from "./hooks-config.js";

/*
 * Runs one hook command and reads its answer by Claude Code's contract: the input is one
 * JSON object on stdin; exit 0 is success (stdout may hold a JSON answer), exit 2 blocks
 * (stderr is the reason), any other exit is an error that blocks nothing.
 */

/** How one hook run ended. */
export interface HookRun {
  outcome: "ok" | "blocked" | "error" | "timeout";
  exitCode: number | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** Why it failed (error, timeout), for the `hook` event. */
  message?: string;
}

/** What a hook asked for, from its exit code and its JSON (or plain) stdout. */
export interface HookAnswer {
  /** Exit 2, `decision: "block"` (or PreToolUse's old `"block"`): the reason. */
  block?: string;
  /** PreToolUse's `permissionDecision` (the old `decision: "approve"` is `allow`). */
  permission?: "allow" | "deny" | "ask";
  /** `permissionDecisionReason`, or `reason` beside a decision. */
  reason?: string;
  /** PreToolUse's `updatedInput`: the call runs with this input instead. */
  updatedInput?: Record<string, unknown>;
  /** `continue: false`: Keen stops after this point; `stopReason` or a default. */
  stop?: string;
  /** `additionalContext`, or for SessionStart and UserPromptSubmit plain stdout: text for the model. */
  context?: string;
}

/** Most of a hook's output Keen keeps (each of stdout and stderr). */
const OUTPUT_LIMIT = 64 * 1024;

/**
 * Runs `command` with `sh -c` in `cwd`, writes `input` as JSON to its stdin and waits at most
 * `timeoutMs`; a hook that runs longer, or whose run is aborted, is killed with its process
 * group. Contract: never throws and never rejects.
 */
export function runHookCommand(
  command: string, input: Record<string, unknown>, options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; signal?: AbortSignal },
): Promise<HookRun> {
  const started = Date.now();
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let ended: HookRun["outcome"] | undefined;
    let message: string | undefined;
    let child: ReturnType<typeof spawn>;
    try {
      // Detached: its own process group, so a timeout kills what the hook started too.
      child = spawn("sh", ["-c", command], { cwd: options.cwd, env: options.env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      resolve({ outcome: "error", exitCode: null, stdout, stderr, durationMs: Date.now() - started, message: messageOf(error) });
      return;
    }
    const kill = (outcome: "timeout" | "error", why: string) => {
      if (ended) return;
      ended = outcome;
      message = why;
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(() => kill("timeout", `killed after ${options.timeoutMs / 1000}s (its timeout)`), options.timeoutMs);
    const onAbort = () => kill("error", "interrupted");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout = capped(stdout + d)));
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr = capped(stderr + d)));
    // A hook that never reads its input must not fail on a closed pipe.
    child.stdin!.on("error", () => {});
    child.stdin!.end(JSON.stringify(input));
    child.on("error", (error) => {
      if (!ended) {
        ended = "error";
        message = messageOf(error);
      }
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      const outcome = ended ?? (code === 0 ? "ok" : code === 2 ? "blocked" : "error");
      if (outcome === "error" && !message) message = `exited with ${code ?? "a signal"}${stderr.trim() ? `: ${stderr.trim()}` : ""}`;
      resolve({ outcome, exitCode: code, stdout, stderr, durationMs: Date.now() - started, ...(message ? { message } : {}) });
    });
  });
}

/** A run's answer as `event` reads it (an error or timeout answers nothing). */
export function readAnswer(event: HookEventName, run: HookRun): HookAnswer {
  if (run.outcome === "blocked") return { block: run.stderr.trim() || `blocked by a ${event} hook (exit 2)` };
  if (run.outcome !== "ok") return {};
  const text = run.stdout.trim();
  const json = parseObject(text);
  if (!json) return text && (event === "SessionStart" || event === "UserPromptSubmit") ? { context: text } : {};
  const answer: HookAnswer = {};
  const specific = (json.hookSpecificOutput && typeof json.hookSpecificOutput === "object" ? json.hookSpecificOutput : {}) as Record<string, unknown>;
  const reason = str(specific.permissionDecisionReason) ?? str(json.reason);
  if (reason) answer.reason = reason;
  const permission = specific.permissionDecision;
  if (event === "PreToolUse" && (permission === "allow" || permission === "deny" || permission === "ask")) answer.permission = permission;
  else if (event === "PreToolUse" && json.decision === "approve") answer.permission = "allow";
  else if (json.decision === "block") {
    if (event === "PreToolUse") answer.permission = "deny";
    else answer.block = reason ?? `blocked by a ${event} hook`;
  }
  const updated = specific.updatedInput;
  if (event === "PreToolUse" && updated && typeof updated === "object" && !Array.isArray(updated)) answer.updatedInput = updated as Record<string, unknown>;
  const context = str(specific.additionalContext);
  if (context) answer.context = context;
  if (json.continue === false) answer.stop = str(json.stopReason) ?? `stopped by a ${event} hook`;
  return answer;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith("{")) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

function capped(text: string): string {
  return text.length > OUTPUT_LIMIT ? text.slice(0, OUTPUT_LIMIT) : text;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
