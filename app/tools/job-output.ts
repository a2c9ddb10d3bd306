import * as z from "zod";
import { defineTool, fail, strArg, toolInput } from "./define.js";
import { jobResult } from "./job-start.js";
import { JOB_OUTPUT_CAP, MAX_WAIT_SECONDS } from "./jobs.js";
import type { Tool, ToolContext } from "./tool.js";

const schema = toolInput("job_output", () => z.object({
  id: z.string().min(1).describe("The job id bash returned (job-1, …)."),
  wait_seconds: z.number().min(0).max(MAX_WAIT_SECONDS).optional()
    .describe(`When there is no new output yet, wait up to this many seconds for some (default 0, max ${MAX_WAIT_SECONDS}).`),
}));

/**
 * `job_output`: a background job's output since the last read, and its state. It only
 * looks (kind `read`, no permission asked): the job was allowed when it started.
 */
export function createJobOutputTool(ctx: ToolContext): Tool {
  return defineTool(
    "job_output",
    `Read a background job's new output (stdout and stderr) since your last read, and whether it is still running or its exit code. ` +
      `With wait_seconds, waits for output when there is none yet (returns as soon as some arrives or the job ends). ` +
      `At most ${JOB_OUTPUT_CAP} characters of unread output are kept; older unread output is dropped.`,
    schema,
    async ({ id, wait_seconds }, call) => {
      if (!ctx.jobs) return fail("Background jobs are not available in this session.");
      const read = await ctx.jobs.read(id, (wait_seconds ?? 0) * 1000, call.signal);
      if (!read) return fail(`No job ${id}. Jobs: ${ctx.jobs.list().map((j) => j.id).join(", ") || "none"}.`);
      return jobResult(read);
    },
    { kind: "read", mutates: false, jobControl: true, describe: (args) => ({ title: `Output of ${strArg(args, "id") ?? "job"}`, locations: [] }) },
  );
}
