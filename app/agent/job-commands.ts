import type { CommandOf } from "../../protocol/commands.js";
import type { EngineContext } from "./engine-context.js";

/*
 * `kill-job`: the user (a front end) ends a background job the model started. The registry is the
 * engine's, shared by its setups, so the latest setup reaches every job of the process; the job's
 * end goes out as its usual `job` event (state `killed`) through the registry's listener, before
 * this answer.
 */
export async function killJob(ctx: EngineContext, command: CommandOf<"kill-job">): Promise<void> {
  const jobs = ctx.latestSetup()?.jobs;
  const known = jobs?.list().find((job) => job.id === command.job_id);
  if (!jobs || !known) return ctx.refuse(command, "unknown_job", `no background job ${command.job_id} in this session`);
  const ended = (job: typeof known) => ({ job_id: job.id, state: job.state, exit_code: job.exit_code });
  if (known.state !== "running") return ctx.refuse(command, "job_ended", `${known.id} has already ${known.state === "killed" ? "been killed" : "exited"}`, ended(known));
  const after = await jobs.kill(known.id);
  // It may have exited on its own between the look and the signal, or another kill (the model's job_kill, a
  // second kill-job) was ending it: then it was not this command that ended it.
  if (after && after.state !== "killed") return ctx.refuse(command, "job_ended", `${known.id} exited before it was killed`, ended(after));
  if (after?.already) return ctx.refuse(command, "job_ended", `${known.id} was being killed already`, ended(after));
  return ctx.respond(command, true, { data: { job_id: known.id, state: "killed", exit_code: after?.exit_code ?? null } });
}
