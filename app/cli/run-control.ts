import type { RunResult } from "../../protocol/result.js";
import type { StopReason } from "../agent/verdict.js";

const EXIT_FOR: Partial<Record<StopReason, number>> = { sigint: 130, sigterm: 143, sighup: 129, epipe: 141 };

/**
 * A one-shot run's outside stops: SIGINT, SIGTERM, SIGHUP, `--timeout` and a
 * vanished stdout reader each stop the engine's turn once, which then stores
 * what it produced. A second SIGINT exits at once (130); the session's claim
 * dies with the process, so it stays resumable. A failed store write stops
 * the turn too, from inside the engine (StopReason "store").
 */
export function createRunControl(timeoutMs: number | undefined, stop: (reason: StopReason, message?: string) => void, startedAt = Date.now()) {
  let reason: StopReason | undefined;
  const fire = (why: StopReason, message?: string) => {
    if (reason) return;
    reason = why;
    stop(why, message);
  };
  const onInt = () => (reason ? process.exit(130) : fire("sigint"));
  const onTerm = () => fire("sigterm");
  const onHup = () => fire("sighup");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  process.on("SIGHUP", onHup);
  // The timeout counts from the start of the run, waiting for the prompt on stdin included.
  const timer = timeoutMs
    ? setTimeout(() => fire("timeout", `timed out after ${(timeoutMs / 1000).toFixed(1)}s`), Math.max(1, startedAt + timeoutMs - Date.now()))
    : undefined;
  return {
    stop: fire,
    /** The exit code for the run's result, given what stopped it. */
    exitCode(result: RunResult | undefined): number {
      if (!result) return 1;
      if (reason && result.status === "interrupted") return EXIT_FOR[reason] ?? 1;
      if (result.status === "max_turns") return result.is_error ? 3 : 0;
      return result.is_error ? 1 : 0;
    },
    dispose() {
      clearTimeout(timer);
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      process.off("SIGHUP", onHup);
    },
  };
}
