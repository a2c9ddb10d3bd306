import type { RunStatus } from "../../protocol/result.js";

/**
 * Why a run was stopped from outside the loop: a signal (SIGHUP when the
 * terminal or ssh session closes), `--timeout`, a vanished stdout reader, or a
 * store write that failed.
 */
export type StopReason = "sigint" | "sigterm" | "sighup" | "timeout" | "epipe" | "store";

/** How a run ends, as the result and the exit code report it. */
export interface Verdict {
  status: RunStatus;
  isError: boolean;
  error?: string;
  exitCode: number;
}

const EXIT_FOR: Record<StopReason, number> = { sigint: 130, sigterm: 143, sighup: 129, timeout: 1, epipe: 141, store: 1 };

/** What `settle` needs from the recorder. */
interface Flushable {
  flush(): Promise<void>;
}

/**
 * Owns the run's abort signal: SIGINT, SIGTERM, SIGHUP, `--timeout`, a
 * vanished stdout reader and a failed store write all abort the turn, which
 * then stores what it produced. A second SIGINT exits at once (130); the
 * session stays resumable, since its claim dies with the process. The
 * timeout counts from `startedAt` (waiting for stdin included).
 */
export function createRunControl(timeoutMs: number | undefined, startedAt = Date.now()) {
  const controller = new AbortController();
  let reason: StopReason | undefined;
  let storeFailure: string | undefined;
  const abort = (why: StopReason) => {
    if (reason) return;
    reason = why;
    controller.abort(new Error(why));
  };
  const onInt = () => (reason ? process.exit(130) : abort("sigint"));
  const onTerm = () => abort("sigterm");
  const onHup = () => abort("sighup");
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  process.on("SIGHUP", onHup);
  const timer = timeoutMs ? setTimeout(() => abort("timeout"), Math.max(1, startedAt + timeoutMs - Date.now())) : undefined;
  return {
    signal: controller.signal,
    abort,
    /**
     * The recorder's `onFailure`: a store write failed, so the turn stops
     * before anything else happens that could not be recorded.
     */
    storeFailed(error: unknown) {
      storeFailure ??= error instanceof Error ? error.message : String(error);
      abort("store");
    },
    /**
     * Final status, whether it is an error, the error to report and the exit
     * code, given how the turn ended and the answer text it produced.
     */
    verdict(status: RunStatus, text: string, failure?: string): Verdict {
      if (reason === "timeout") {
        return { status: "error", isError: true, error: `timed out after ${(timeoutMs! / 1000).toFixed(1)}s`, exitCode: 1 };
      }
      // Whatever the loop made of it: a run whose events could not all be stored failed.
      if (reason === "store") return { status: "error", isError: true, error: storeFailure, exitCode: 1 };
      if (reason && status === "interrupted") return { status, isError: true, exitCode: EXIT_FOR[reason] };
      if (status === "error" || status === "interrupted") return { status, isError: true, error: failure, exitCode: 1 };
      if (status === "max_turns" && !text) {
        return { status, isError: true, error: "the step limit was reached and the final step produced no answer", exitCode: 3 };
      }
      return { status, isError: false, exitCode: 0 };
    },
    /**
     * Waits for the recorder, then releases the session. Contract: never
     * throws; a store failure not yet reported (a failed write of the result
     * line itself, or of the release) is one line on stderr. The exit code
     * stays the verdict's, so it always agrees with the printed result.
     */
    async settle(recorder: Flushable, release: () => Promise<void>): Promise<void> {
      let reported = reason === "store";
      const report = (error: unknown) => {
        if (!reported) process.stderr.write(`keen: ${error instanceof Error ? error.message : String(error)}\n`);
        reported = true;
      };
      await recorder.flush().catch(report);
      await release().catch(report);
    },
    dispose() {
      clearTimeout(timer);
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      process.off("SIGHUP", onHup);
    },
  };
}
