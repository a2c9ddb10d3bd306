import type { EventOf } from "../../../protocol/events.js";
import type { Theme } from "../../../themes/index.js";
import { paint } from "../style.js";
import { fit, sanitize, truncate } from "../text.js";

type Job = EventOf<"job">;

/** Jobs still running, for the status bar's count. */
export function runningJobs(jobs: Map<string, Job>): number {
  let n = 0;
  for (const job of jobs.values()) if (job.state === "running") n++;
  return n;
}

/** 75000 → "1m15s". */
function runtime(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m${String(s % 60).padStart(2, "0")}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}

/** The `/jobs` order: running jobs first (newest first), then the ended ones (newest first). */
export function jobOrder(jobs: Map<string, Job>): Job[] {
  return [...jobs.values()].sort((a, b) => Number(b.state === "running") - Number(a.state === "running") || b.started_at - a.started_at);
}

/** The job the `/jobs` selection is on: `selected` while the view knows it, else the first in `jobOrder`. */
export function selectedJob(jobs: Map<string, Job>, selected: string | undefined): string | undefined {
  return selected && jobs.has(selected) ? selected : jobOrder(jobs)[0]?.job_id;
}

/**
 * The `/jobs` view: one line per background job in `jobOrder`: its state (with the exit code),
 * how long it ran or has been running, its id and its command (first line, cut to the width).
 * The `selected` job's line is drawn as a selection (the job `k` kills).
 */
export function jobLines(jobs: Map<string, Job>, theme: Theme, width: number, now: number, selected?: string): string[] {
  if (jobs.size === 0) return [paint(theme, "dim", "No background jobs in this session. The model starts one with bash background: true.")];
  return jobOrder(jobs).map((job) => {
    const state = job.state === "running" ? "running" : job.state === "killed" ? "killed" : `exit ${job.exit_code ?? "?"}`;
    const token = job.state === "running" ? "accent" : job.state === "exited" && job.exit_code === 0 ? "success" : job.state === "killed" ? "dim" : "error";
    const mark = job.state === "running" ? "●" : job.state === "exited" && job.exit_code === 0 ? "✓" : "✗";
    const head = `${mark} ${state.padEnd(8)} ${runtime((job.ended_at ?? now) - job.started_at).padStart(6)}  ${job.job_id}  `;
    const command = truncate(sanitize(job.command.split("\n")[0] ?? "").trim(), Math.max(1, width - head.length));
    if (job.job_id === selected) return paint(theme, "selection", fit(head + command, width));
    return paint(theme, token, head) + command;
  });
}

/**
 * The job a `/jobs kill` argument names among the jobs the view knows: its id, `N` for `job-N`, or a
 * prefix of one id only. Undefined when none matches; the ids when several do.
 */
export function findJob(jobs: Map<string, Job>, arg: string): string | string[] | undefined {
  if (jobs.has(arg)) return arg;
  if (jobs.has(`job-${arg}`)) return `job-${arg}`;
  const matches = [...jobs.keys()].filter((id) => id.startsWith(arg));
  return matches.length === 1 ? matches[0] : matches.length ? matches : undefined;
}
