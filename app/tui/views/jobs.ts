import type { EventOf } from "../../../protocol/events.js";
import type { Theme } from "../../../themes/index.js";
import { paint } from "../style.js";
import { sanitize, truncate } from "../text.js";

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

/**
 * The `/jobs` view: one line per background job, running ones first (newest first), then the
 * ended ones: its state (with the exit code), how long it ran or has been running, its id and
 * its command (first line, cut to the width).
 */
export function jobLines(jobs: Map<string, Job>, theme: Theme, width: number, now: number): string[] {
  if (jobs.size === 0) return [paint(theme, "dim", "No background jobs in this session. The model starts one with bash background: true.")];
  const all = [...jobs.values()].sort((a, b) => Number(b.state === "running") - Number(a.state === "running") || b.started_at - a.started_at);
  return all.map((job) => {
    const state = job.state === "running" ? "running" : job.state === "killed" ? "killed" : `exit ${job.exit_code ?? "?"}`;
    const token = job.state === "running" ? "accent" : job.state === "exited" && job.exit_code === 0 ? "success" : job.state === "killed" ? "dim" : "error";
    const mark = job.state === "running" ? "●" : job.state === "exited" && job.exit_code === 0 ? "✓" : "✗";
    const head = `${mark} ${state.padEnd(8)} ${runtime((job.ended_at ?? now) - job.started_at).padStart(6)}  ${job.job_id}  `;
    const command = sanitize(job.command.split("\n")[0] ?? "").trim();
    return paint(theme, token, head) + truncate(command, Math.max(1, width - head.length));
  });
}
