import { spawn, type ChildProcess } from "node:child_process";
import type { Redactor, StreamRedactor } from "../permissions/redact.js";
import type { WrappedCommand } from "../sandbox/runtime.js";
import { signalGroup, trackGroup, untrackGroup } from "./process-groups.js";

/*
 * Background jobs (bash with `background: true`): long-lived commands such as a dev server
 * or a watch build that run while the model keeps working. One registry per session engine
 * (so a model switch keeps them); it ends every job when the engine ends, and a process
 * 'exit' hook SIGKILLs any group still alive, so no job outlives Keen's process.
 */

/** Characters of unread output a job keeps; older unread output is dropped (and counted). */
export const JOB_OUTPUT_CAP = 30_000;
/** Jobs that may run at once per session: a model looping on `background: true` must not fork-bomb. */
export const MAX_RUNNING_JOBS = 8;
/** The longest `job_output` wait, in seconds. */
export const MAX_WAIT_SECONDS = 120;
const KILL_GRACE_MS = 2000;
// After the job's shell exits, how long its pipes may stay open (a process that left the group).
const DRAIN_MS = 2000;

export type JobState = "running" | "exited" | "killed";

/** What a UI and the model see of a job. */
export interface JobInfo {
  id: string;
  command: string;
  pid?: number;
  state: JobState;
  exit_code: number | null;
  started_at: number;
  ended_at?: number;
}

/** A job as a kill left it; `already` when that kill was not what ended it. */
export type KilledJob = JobInfo & { already: boolean };

/** New output since the last read, and the job as it is now. */
export interface JobRead {
  output: string;
  /** Bytes of unread output dropped because more than JOB_OUTPUT_CAP piled up between reads. */
  dropped: number;
  job: JobInfo;
}

/** What starts a job: the command as the model gave it, the script to spawn (wrapped when sandboxed). */
export interface JobSpec {
  command: string;
  script: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  sandboxed?: Pick<WrappedCommand, "finish" | "terminate">;
}

interface Job {
  info: JobInfo;
  child: ChildProcess;
  unread: string;
  dropped: number;
  secrets?: StreamRedactor;
  killing: boolean;
  sandboxed?: JobSpec["sandboxed"];
  /** Wakes readers waiting for output or the end. */
  waiters: Set<() => void>;
  closed: Promise<void>;
}


export class JobRegistry {
  private readonly jobs = new Map<string, Job>();
  private next = 1;
  private listener?: (job: JobInfo) => void;

  constructor(private readonly redactor?: Pick<Redactor, "stream" | "active">) {}

  /** Where start and end of each job are reported (the engine's emit); replaces the last one. */
  onChange(listener: (job: JobInfo) => void): void {
    this.listener = listener;
  }

  list(): JobInfo[] {
    return [...this.jobs.values()].map((job) => ({ ...job.info }));
  }

  running(): number {
    return [...this.jobs.values()].filter((job) => job.info.state === "running").length;
  }

  /** Starts a job in its own process group; throws when too many run already. */
  start(spec: JobSpec): JobInfo {
    if (this.running() >= MAX_RUNNING_JOBS) throw new Error(`${MAX_RUNNING_JOBS} background jobs are running already; end one with job_kill first`);
    const id = `job-${this.next++}`;
    // detached: its own process group, so a kill reaches every process it started (sandboxed: bwrap and its PID namespace).
    const child = spawn("bash", ["-c", spec.script], { cwd: spec.cwd, env: spec.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const info: JobInfo = { id, command: spec.command, state: "running", exit_code: null, started_at: Date.now(), ...(child.pid ? { pid: child.pid } : {}) };
    let resolveClosed!: () => void;
    const job: Job = {
      info, child, unread: "", dropped: 0, killing: false, waiters: new Set(), sandboxed: spec.sandboxed,
      secrets: this.redactor?.active ? this.redactor.stream() : undefined,
      closed: new Promise((resolve) => (resolveClosed = resolve)),
    };
    this.jobs.set(id, job);
    if (child.pid) trackGroup(child.pid);

    const onData = (raw: string) => this.append(job, job.secrets ? job.secrets.push(raw) : raw);
    child.stdout!.setEncoding("utf8").on("data", onData);
    child.stderr!.setEncoding("utf8").on("data", onData);
    let ended = false;
    const end = (code: number | null, error?: Error) => {
      if (ended) return;
      ended = true;
      if (info.pid) {
        // What the job left in its group ends with it, as for a bash call.
        signalGroup(info.pid, "SIGKILL");
        untrackGroup(info.pid);
      }
      child.stdout!.destroy();
      child.stderr!.destroy();
      const rest = job.secrets?.end();
      if (rest) this.append(job, rest);
      if (error) this.append(job, `\n[could not run bash: ${error.message}]\n`);
      const blocked = spec.sandboxed?.finish();
      if (blocked) this.append(job, `\n${blocked}\n`);
      info.state = job.killing ? "killed" : "exited";
      info.exit_code = code;
      info.ended_at = Date.now();
      this.wake(job);
      resolveClosed();
      this.report(info);
    };
    let drain: NodeJS.Timeout | undefined;
    child.on("exit", (code) => {
      drain = setTimeout(() => end(code), DRAIN_MS);
      drain.unref();
    });
    child.on("close", (code) => {
      clearTimeout(drain);
      end(code);
    });
    child.on("error", (error) => end(null, error));
    this.report(info);
    return { ...info };
  }

  private append(job: Job, chunk: string): void {
    if (!chunk) return;
    job.unread += chunk;
    if (job.unread.length > JOB_OUTPUT_CAP) {
      const cut = job.unread.length - JOB_OUTPUT_CAP;
      job.dropped += Buffer.byteLength(job.unread.slice(0, cut));
      job.unread = job.unread.slice(cut);
    }
    this.wake(job);
  }

  private wake(job: Job): void {
    for (const wake of [...job.waiters]) wake();
  }

  private report(info: JobInfo): void {
    try {
      this.listener?.({ ...info });
    } catch {
      // A failing subscriber must not break the job.
    }
  }

  /**
   * The job's output since the last read (which this read consumes). With nothing unread and
   * the job running, waits up to `waitMs` for the first new output or its end; `signal`
   * (the turn's abort) ends the wait early. Undefined for an unknown id.
   */
  async read(id: string, waitMs = 0, signal?: AbortSignal): Promise<JobRead | undefined> {
    const job = this.jobs.get(id);
    if (!job) return undefined;
    if (job.unread === "" && job.info.state === "running" && waitMs > 0 && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          job.waiters.delete(done);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(waitMs, MAX_WAIT_SECONDS * 1000));
        job.waiters.add(done);
        signal?.addEventListener("abort", done, { once: true });
      });
    }
    const read: JobRead = { output: job.unread, dropped: job.dropped, job: { ...job.info } };
    job.unread = "";
    job.dropped = 0;
    return read;
  }

  /**
   * Ends a job: SIGTERM (inside the sandbox, to its processes), then SIGKILL to its group
   * after a grace period; resolves once it has ended. Undefined for an unknown id. `already`:
   * this call ended nothing, since the job had ended or another kill was ending it (so two
   * kills at once get one "killed" between them, not two).
   */
  async kill(id: string): Promise<KilledJob | undefined> {
    const job = this.jobs.get(id);
    if (!job) return undefined;
    const pid = job.info.pid;
    if (job.info.state !== "running") return { ...job.info, already: true };
    if (job.killing) {
      await job.closed;
      return { ...job.info, already: true };
    }
    if (pid) {
      job.killing = true;
      // Sandboxed, the group leader is bubblewrap, which would end everything at once: the TERM goes inside.
      if (!job.sandboxed?.terminate(pid)) signalGroup(pid, "SIGTERM");
      const force = setTimeout(() => signalGroup(pid, "SIGKILL"), KILL_GRACE_MS);
      await job.closed;
      clearTimeout(force);
    }
    return { ...job.info, already: false };
  }

  /** Ends every running job (the engine ending); never throws. */
  async killAll(): Promise<void> {
    await Promise.all([...this.jobs.keys()].map((id) => this.kill(id)));
  }
}
