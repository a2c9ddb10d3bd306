import { parentPort } from "node:worker_threads";
import { runSearchJob, type SearchJob } from "./search-jobs.js";

/*
 * Entry of the search worker thread (built as dist/search-worker.cjs; see
 * search-runner.ts). One job at a time: a message in, `{ ok, value | error }`
 * out. The main thread terminates the worker when a job runs past its budget
 * or the run is aborted, however deep in a regex it is.
 */
parentPort!.on("message", (job: SearchJob) => {
  runSearchJob(job).then(
    (value) => parentPort!.postMessage({ ok: true, value }),
    (error: unknown) => parentPort!.postMessage({ ok: false, error: error instanceof Error ? error.message : String(error) }),
  );
});
