import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { Worker } from "node:worker_threads";
import type { SearchJob, SearchJobResult } from "./search-jobs.js";

/**
 * Time budget of one `grep` or `glob` call, whatever `--timeout` says: past it
 * the search is stopped and the model gets an error naming the likely cause.
 */
export const SEARCH_BUDGET_MS = 10_000;

/** How a job ended: its value, its error, or stopped (budget spent, run aborted). */
export type SearchOutcome<T> = { value: T } | { error: string } | { stopped: "budget" | "abort" };

/** A job with its deadline and the run's abort signal. */
export interface SearchLimits {
  /** `Date.now()` value after which the job is stopped. */
  deadline: number;
  signal: AbortSignal;
}

let idle: Worker | undefined;

/**
 * Runs `job` in the search worker thread. Contract: never throws, and resolves
 * by `deadline` or at once on abort whatever the job does — the worker is then
 * terminated (V8 interrupts even a backtracking regex), so the event loop, and
 * with it SIGINT and SIGTERM, is never held up. A worker that finished its job
 * is kept, unreferenced, for the next call.
 */
export function runInSearchWorker<K extends SearchJob["type"]>(
  job: Extract<SearchJob, { type: K }>,
  limits: SearchLimits,
): Promise<SearchOutcome<SearchJobResult[K]>> {
  if (limits.signal.aborted) return Promise.resolve({ stopped: "abort" });
  if (Date.now() >= limits.deadline) return Promise.resolve({ stopped: "budget" });
  const worker = idle ?? startWorker();
  idle = undefined;
  worker.ref();
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: SearchOutcome<SearchJobResult[K]>, reusable: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      limits.signal.removeEventListener("abort", onAbort);
      worker.off("message", onMessage).off("error", onError).off("exit", onExit);
      if (reusable && !idle) {
        worker.unref();
        idle = worker;
      } else {
        void worker.terminate();
      }
      resolve(outcome);
    };
    const onMessage = (reply: { ok: true; value: SearchJobResult[K] } | { ok: false; error: string }) =>
      finish(reply.ok ? { value: reply.value } : { error: reply.error }, true);
    const onError = (error: Error) => finish({ error: `the search failed: ${error.message}` }, false);
    const onExit = (code: number) => finish({ error: `the search stopped unexpectedly (exit ${code})` }, false);
    const onAbort = () => finish({ stopped: "abort" }, false);
    const timer = setTimeout(() => finish({ stopped: "budget" }, false), limits.deadline - Date.now());
    worker.on("message", onMessage).on("error", onError).on("exit", onExit);
    limits.signal.addEventListener("abort", onAbort, { once: true });
    worker.postMessage(job);
  });
}

/**
 * The worker runs search-worker.ts. From the bundle that is dist/search-worker.cjs,
 * a side bundle beside keen.cjs (scripts/build.mjs), so it also works when Keen
 * started from the V8 snapshot; the worker gets no execArgv (`--snapshot-blob`
 * is not for it). Tests run the sources under tsx, whose loader does not reach
 * workers: the worker registers tsx's CommonJS hook itself, then loads the entry.
 */
function startWorker(): Worker {
  // Loaded here, not at import: a worker_threads evaluated into the start-up snapshot cannot start workers.
  const here = import.meta.url;
  const { Worker } = createRequire(here)("node:worker_threads") as typeof import("node:worker_threads");
  let worker: Worker;
  if (here.endsWith(".ts")) {
    const tsx = createRequire(here).resolve("tsx/cjs/api");
    const entry = fileURLToPath(new URL("./search-worker.ts", here));
    worker = new Worker(`require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(entry)});`, { eval: true });
  } else {
    worker = new Worker(fileURLToPath(new URL("./search-worker.cjs", here)), { execArgv: [] });
  }
  // An idle worker that dies is dropped; without a listener its error would crash the process.
  worker.on("error", () => {}).on("exit", () => {
    if (idle === worker) idle = undefined;
  });
  return worker;
}
