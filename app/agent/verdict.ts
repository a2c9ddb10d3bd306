import type { ErrorCode } from "../../protocol/responses.js";
import type { RunStatus } from "../../protocol/result.js";

/** Why a turn was stopped from outside the loop. */
export type StopReason = "interrupt" | "shutdown" | "sigint" | "sigterm" | "sighup" | "timeout" | "epipe" | "store";

/** How a turn ends, as its `result` reports it. */
export interface Verdict {
  status: RunStatus;
  isError: boolean;
  error?: string;
  /** The `error` event's `error_code` for `error`. */
  code?: ErrorCode;
}

/**
 * The turn's final status given how the loop ended, why it was stopped (if it
 * was) and the answer. A timeout is an error; any other stop is an
 * interruption; a step limit without an answer is an error result.
 */
export function verdictOf(loop: RunStatus, text: string, stop?: { reason: StopReason; message?: string }, failure?: string): Verdict {
  const status = failure && loop === "success" ? "error" : loop;
  if (stop?.reason === "timeout" || stop?.reason === "store") return { status: "error", isError: true, error: stop.message, code: stop.reason };
  if (stop && status === "interrupted") return { status, isError: true };
  if (status === "error" || status === "interrupted") return { status, isError: true, error: failure, ...(failure ? { code: "structured_output" as const } : {}) };
  if (status === "max_turns" && !text) {
    return { status, isError: true, error: "the step limit was reached and the final step produced no answer", code: "max_turns" };
  }
  return { status, isError: false };
}
