import * as z from "zod";
import { defineTool, fail, strArg, toolInput } from "./define.js";
import { jobResult } from "./job-start.js";
import type { Tool, ToolContext } from "./tool.js";

const schema = toolInput("job_kill", () => z.object({ id: z.string().min(1).describe("The job id bash returned (job-1, …).") }));

/**
 * `job_kill`: ends a background job and every process it started (SIGTERM, then SIGKILL after
 * a grace period). Kind `exec` (it acts on processes), but `mutates: false`: it can only stop
 * what this session's own bash calls started, which the user already allowed, so no mode asks
 * about it (a prompt to stop the model's own dev server would only be noise).
 */
export function createJobKillTool(ctx: ToolContext): Tool {
  return defineTool(
    "job_kill",
    "End a background job started with bash background: true, with every process it started. Returns its last unread output and how it ended.",
    schema,
    async ({ id }) => {
      if (!ctx.jobs) return fail("Background jobs are not available in this session.");
      const ended = await ctx.jobs.kill(id);
      if (!ended) return fail(`No job ${id}. Jobs: ${ctx.jobs.list().map((j) => j.id).join(", ") || "none"}.`);
      const read = await ctx.jobs.read(id);
      const result = jobResult(read!, ended.state === "killed" && !ended.already ? `Killed ${id}.` : `${id} had already ended.`);
      // Killing it is what was asked: not an error, whatever its exit code.
      return { ...result, is_error: false };
    },
    { kind: "exec", mutates: false, jobControl: true, describe: (args) => ({ title: `Kill ${strArg(args, "id") ?? "job"}`, locations: [] }) },
  );
}
