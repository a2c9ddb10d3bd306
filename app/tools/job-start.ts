import { existsSync } from "node:fs";
import { fail } from "./define.js";
import type { JobInfo, JobRead } from "./jobs.js";
import type { ToolContext, ToolResult } from "./tool.js";

/** How long `bash` with `background: true` waits for a job's first output before it returns. */
const FIRST_OUTPUT_MS = 1000;

/**
 * bash with `background: true`: starts the command as a job (confined like any bash call when
 * the sandbox is on) and returns its id, with whatever it printed in its first second, so a
 * command that fails at once says so. Hosts outside the sandbox's allowlist are denied for a
 * job: its connections happen after the turn that could ask about them.
 */
export async function startJob(command: string, ctx: ToolContext, signal: AbortSignal): Promise<ToolResult> {
  const jobs = ctx.jobs;
  if (!jobs) return fail("Background jobs are not available in this session; run the command without background.");
  if (signal.aborted) return fail("Aborted before the command started.");
  if (!existsSync(ctx.cwd)) return fail(`The working directory ${ctx.cwd} does not exist.`);
  const script = `exec 2>&1; ${command}`;
  let started: JobInfo;
  try {
    const wrapped = ctx.sandbox ? await ctx.sandbox.wrap(script) : undefined;
    started = jobs.start({ command, script: wrapped?.script ?? script, cwd: ctx.cwd, env: ctx.env, sandboxed: wrapped });
  } catch (error) {
    return fail(`Could not start the job: ${error instanceof Error ? error.message : String(error)}`, { command });
  }
  const first = await jobs.read(started.id, FIRST_OUTPUT_MS, signal);
  return jobResult(first!, `Started ${started.id} (pid ${started.pid ?? "?"}) in the background.`);
}

/** A job's state for the model: running, or how it ended. */
export function jobState(job: JobInfo): string {
  if (job.state === "running") return `${job.id} is running`;
  if (job.state === "killed") return `${job.id} was killed`;
  return `${job.id} exited with code ${job.exit_code ?? "?"}`;
}

/** A read of a job as a tool result: its new output, what was dropped, its state; details for UIs. */
export function jobResult(read: JobRead, head?: string): ToolResult {
  const { job } = read;
  const parts = head ? [head] : [];
  if (read.dropped) parts.push(`[${read.dropped} bytes of older output dropped: more than fit between reads]`);
  parts.push(read.output === "" ? "(no new output)" : read.output.replace(/\n$/, ""));
  parts.push(`[${jobState(job)}${job.state === "running" ? `; read more with job_output, end it with job_kill` : ""}]`);
  const failed = job.state === "exited" && job.exit_code !== 0;
  return {
    content: parts.join("\n"),
    is_error: failed,
    details: { job_id: job.id, command: job.command, state: job.state, exit_code: job.exit_code, ...(job.pid ? { pid: job.pid } : {}) },
  };
}
