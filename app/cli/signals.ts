import type { RunResult } from "../../protocol/result.js";
import type { StopReason } from "../agent/verdict.js";

/**
 * Every exit code a Keen front end returns (docs/headless.md lists them for keen run): one table.
 * A stop from outside is 128 + the signal's number, as a shell reports a
 * process the signal killed; a reader that went away is SIGPIPE's.
 */
export const EXIT = {
  ok: 0,
  /** The run failed (provider, tool loop, store), or a stop with no code of its own (timeout). */
  failed: 1,
  /** Bad flags or input, found before any session is written. */
  usage: 2,
  /** keen run ended at --max-turns without an answer. */
  maxTurns: 3,
  sighup: 129,
  sigint: 130,
  epipe: 141,
  sigterm: 143,
} as const;

const FOR_STOP: Partial<Record<StopReason, number>> = { sighup: EXIT.sighup, sigint: EXIT.sigint, sigterm: EXIT.sigterm, epipe: EXIT.epipe };
const SIGNALS: [NodeJS.Signals, StopReason][] = [["SIGINT", "sigint"], ["SIGTERM", "sigterm"], ["SIGHUP", "sighup"]];

/** The exit code of a process stopped for `reason` (undefined: not stopped, 0). */
export function exitCodeForStop(reason: StopReason | undefined): number {
  return reason === undefined ? EXIT.ok : (FOR_STOP[reason] ?? EXIT.failed);
}

/** The exit code of a front end the TUI reports ended by `signal`. */
export function exitCodeForSignal(signal: NodeJS.Signals | undefined): number {
  return exitCodeForStop(SIGNALS.find(([name]) => name === signal)?.[1] ?? (signal ? "shutdown" : undefined));
}

/** keen run's exit code for its one turn's result, given what stopped it from outside. */
export function exitCodeForResult(result: RunResult | undefined, stoppedBy: StopReason | undefined): number {
  if (!result) return EXIT.failed;
  if (stoppedBy && result.status === "interrupted") return exitCodeForStop(stoppedBy);
  if (result.status === "max_turns") return result.is_error ? EXIT.maxTurns : EXIT.ok;
  return result.is_error ? EXIT.failed : EXIT.ok;
}

/**
 * A front end's outside stops: SIGINT, SIGTERM and SIGHUP (and whatever else
 * the front end calls `stop` for: a timeout, a reader gone) call `onStop`
 * once, with the first reason; the engine then stores what the running turn
 * produced and ends. A SIGINT after that exits at once (130): a second
 * Ctrl-C does not wait for the store. Claims die with the process, so the
 * session stays resumable. Contract: `dispose` removes every handler.
 */
export function handleStops(onStop: (reason: StopReason, message?: string) => void) {
  let reason: StopReason | undefined;
  const stop = (why: StopReason, message?: string) => {
    if (reason) return;
    reason = why;
    onStop(why, message);
  };
  const handlers = SIGNALS.map(([signal, why]) => {
    const handler = () => (why === "sigint" && reason ? process.exit(EXIT.sigint) : stop(why));
    process.on(signal, handler);
    return () => process.off(signal, handler);
  });
  return {
    stop,
    /** The first reason to stop, if any came. */
    get reason(): StopReason | undefined {
      return reason;
    },
    /** The exit code for a process that ended after this (0 when nothing stopped it). */
    exitCode: () => exitCodeForStop(reason),
    dispose(): void {
      for (const off of handlers) off();
    },
  };
}
