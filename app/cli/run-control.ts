import type { RunStatus } from "../../protocol/result.js";

/** Why a run was stopped from outside the loop. */
export type StopReason = "sigint" | "sigterm" | "timeout" | "epipe";

/** How a run ends, as the result and the exit code report it. */
export interface Verdict {
  status: RunStatus;
  isError: boolean;
  error?: string;
  exitCode: number;
}

const EXIT_FOR: Record<StopReason, number> = { sigint: 130, sigterm: 143, timeout: 1, epipe: 141 };

/**
 * Owns the run's abort signal: SIGINT, SIGTERM, `--timeout` and a vanished
 * stdout reader all abort the turn, which then stores what it produced. A
 * second SIGINT exits at once.
 */
export function createRunControl(timeoutMs: number | undefined) {
  const controller = new AbortController();
  let reason: StopReason | undefined;
  const abort = (why: StopReason) => {
    if (reason) return;
    reason = why;
    controller.abort(new Error(why));
  };
  const onInt = () => (reason ? process.exit(130) : abort("sigint"));
  const onTerm = () => abort("sigterm");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  const timer = timeoutMs ? setTimeout(() => abort("timeout"), timeoutMs) : undefined;
  return {
    signal: controller.signal,
    abort,
    /**
     * Final status, whether it is an error, the error to report and the exit
     * code, given how the turn ended and the answer text it produced.
     */
    verdict(status: RunStatus, text: string, failure?: string): Verdict {
      if (reason === "timeout") {
        return { status: "error", isError: true, error: `timed out after ${(timeoutMs! / 1000).toFixed(1)}s`, exitCode: 1 };
      }
      if (reason && status === "interrupted") return { status, isError: true, exitCode: EXIT_FOR[reason] };
      if (status === "error" || status === "interrupted") return { status, isError: true, error: failure, exitCode: 1 };
      if (status === "max_turns" && !text) {
        return { status, isError: true, error: "the step limit was reached and the final step produced no answer", exitCode: 3 };
      }
      return { status, isError: false, exitCode: 0 };
    },
    dispose() {
      clearTimeout(timer);
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
    },
  };
}
