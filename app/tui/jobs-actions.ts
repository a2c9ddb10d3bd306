import type { TuiController } from "./controller.js";
import type { Overlay } from "./frame.js";
import type { InputEvent } from "./keys.js";
import { findJob, jobOrder, selectedJob } from "./views/jobs.js";

/*
 * The user's hand on background jobs: the `/jobs` overlay's selection and its `k`, and `/jobs kill <id>`.
 * A kill is the engine's `kill-job` command; the overlay changes only when the job's `job` event says it ended.
 */

type JobsOverlay = Extract<Overlay, { kind: "jobs" }>;

/** Opens `/jobs` with the first job in its order (the newest running one) selected. */
export function openJobs(c: TuiController): void {
  c.ui.overlay = { kind: "jobs", selected: jobOrder(c.view.jobs)[0]?.job_id };
}

/** A key in the `/jobs` overlay: ↑/↓ (and PgUp/PgDn, Home/End) select, `k` kills the selected running job, Esc/Enter/q close. */
export function jobsOverlayInput(c: TuiController, o: JobsOverlay, ev: InputEvent, key: string | undefined): void {
  const text = ev.type === "text" ? ev.text : undefined;
  if (key === "escape" || key === "enter" || text === "q" || text === "?") {
    c.ui.overlay = undefined;
    return c.deps.requestFrame(true);
  }
  const order = jobOrder(c.view.jobs).map((job) => job.job_id);
  // Opened before any job existed, the first one that came is the selected one (as the view draws it).
  o.selected = selectedJob(c.view.jobs, o.selected);
  const at = Math.max(0, order.indexOf(o.selected ?? ""));
  const step = key === "up" ? -1 : key === "down" ? 1 : key === "pageup" ? -10 : key === "pagedown" ? 10 : key === "home" ? -order.length : key === "end" ? order.length : 0;
  if (step && order.length) o.selected = order[Math.max(0, Math.min(order.length - 1, at + step))];
  if (text === "k" && o.selected) {
    const job = c.view.jobs.get(o.selected);
    if (job?.state === "running") killJob(c, job.job_id);
    else if (job) c.note(`${job.job_id} has already ${job.state === "killed" ? "been killed" : "exited"}`);
  }
  c.deps.requestFrame(true);
}

/** `/jobs kill <id>`: `job-2`, `2`, or a prefix of one job's id; the engine answers for ids the view does not know. */
export function killJobNamed(c: TuiController, arg: string): void {
  if (!arg) return c.notice("/jobs kill takes a job id (as /jobs lists them, e.g. job-1 or 1)", "error");
  const found = findJob(c.view.jobs, arg);
  if (Array.isArray(found)) return c.notice(`"${arg}" matches several jobs: ${found.join(", ")}`, "error");
  killJob(c, found ?? (/^\d+$/.test(arg) ? `job-${arg}` : arg));
}

function killJob(c: TuiController, id: string): void {
  c.note(`stopping ${id}…`, 5000);
  // A refusal (unknown_job, job_ended) becomes an error notice in the transcript, as every refused command does.
  c.request({ kind: "kill-job", job_id: id }, (r) => {
    if (r.ok) c.note(`${id} killed`);
  });
}
