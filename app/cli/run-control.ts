import type { RunResult } from "../../protocol/result.js";
import type { StopReason } from "../agent/verdict.js";
import { exitCodeForResult, handleStops } from "./signals.js";

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
