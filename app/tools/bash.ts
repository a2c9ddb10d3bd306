import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import * as z from "zod";
import { countLines, defineTool, fail, strArg, toolInput } from "./define.js";
import type { SpawnedCommand } from "../sandbox/runtime.js";
import type { Tool, ToolContext, ToolResult } from "./tool.js";
import { startJob } from "./job-start.js";
import { signalGroup, trackGroup, untrackGroup } from "./process-groups.js";

const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_TIMEOUT_MS = 600_000;
/** Characters of output kept for the model: the first and last halves of this. */
export const BASH_OUTPUT_CAP = 30_000;
const KILL_GRACE_MS = 1000;
// After bash exits, how long its pipes may stay open: a process that left the group
// (setsid) can hold them forever, and the call must still end.
const DRAIN_MS = 2000;

/** Keeps the head and the tail of a long output and counts the bytes cut between them. */
class CappedOutput {
  private head = "";
  private tail = "";
  private cut = 0;
  constructor(private readonly half: number) {}

  push(chunk: string): void {
    if (this.head.length < this.half) {
      const take = chunk.slice(0, this.half - this.head.length);
      this.head += take;
      chunk = chunk.slice(take.length);
    }
    this.tail += chunk;
    // Trim only when the tail is twice its size, so a stream of small chunks stays linear.
    if (this.tail.length > 2 * this.half) this.trim();
  }

  private trim(): void {
    if (this.tail.length <= this.half) return;
    this.cut += Buffer.byteLength(this.tail.slice(0, this.tail.length - this.half));
    this.tail = this.tail.slice(-this.half);
  }

  result(): { text: string; truncated: boolean } {
    this.trim();
    if (this.cut === 0) return { text: this.head + this.tail, truncated: false };
    const note = `\n\n[... ${this.cut} bytes of output cut from the middle; redirect to a file and grep it to see everything ...]\n\n`;
    return { text: this.head + note + this.tail, truncated: true };
  }
}

const schema = toolInput("bash", () => z.object({
  command: z.string().min(1).describe("The bash command line to run."),
  timeout_ms: z
    .number()
    .int()
    .min(1)
    .max(MAX_TIMEOUT_MS)
    .optional()
    .describe(`Timeout in milliseconds (default ${DEFAULT_TIMEOUT_MS}, max ${MAX_TIMEOUT_MS}).`),
  background: z
    .boolean()
    .optional()
    .describe("Run as a background job (a dev server, a watch build): returns a job id at once; read its output with job_output, end it with job_kill."),
}));

const description = `Run a command with \`bash -c\` in the session's working directory; returns stdout and stderr interleaved.
Each call starts a fresh shell: cd, exported variables and shell functions do NOT persist between calls (chain with && or use absolute paths).
stdin is /dev/null: interactive prompts get EOF, so pass flags such as --yes and avoid pagers and editors.
Background processes (&) are killed when the command finishes: for a server or a watcher, set background: true instead (no timeout; it runs until job_kill or the end of the session). Default timeout ${DEFAULT_TIMEOUT_MS / 1000}s, max ${MAX_TIMEOUT_MS / 1000}s; on timeout the whole process group is killed.
Output over ${BASH_OUTPUT_CAP} characters keeps only its head and tail. A non-zero exit code makes the result an error.
Prefer read_file, edit_file, write_file, grep, glob and list for file work.`;

/** The `bash` tool: one fresh `bash -c` per call, in its own process group. */
export function createBashTool(ctx: ToolContext): Tool {
  return defineTool("bash", describe(ctx), schema, async ({ command, timeout_ms, background }, call) => {
    if (background) return startJob(command, ctx, call.signal);
    const timeout = timeout_ms ?? DEFAULT_TIMEOUT_MS;
    if (call.signal.aborted) return fail("Aborted before the command started.", { command, exit_code: null, truncated: false, duration_ms: 0 });
    if (!existsSync(ctx.cwd)) return fail(`The working directory ${ctx.cwd} does not exist.`);
    // `exec 2>&1` gives stdout and stderr one pipe, so they keep their true order (two pipes
    // race); on the same line, so bash's "line N" messages still match the command.
    const script = `exec 2>&1; ${command}`;
    // detached: its own process group, so a kill reaches every process the command started
    // (sandboxed: bwrap, whose PID namespace takes every process inside down with it).
    if (!ctx.sandbox) return runBash(command, { child: spawn("bash", ["-c", script], { cwd: ctx.cwd, env: ctx.env, stdio: ["ignore", "pipe", "pipe"], detached: true }) }, timeout, ctx, call.signal, call.onOutput);
    let spawned: SpawnedCommand;
    try {
      spawned = await ctx.sandbox.spawn(script, call.askHost, { cwd: ctx.cwd, env: ctx.env });
    } catch (error) {
      return fail(`Could not start the sandbox: ${error instanceof Error ? error.message : String(error)}`, { command, exit_code: null, truncated: false, duration_ms: 0 });
    }
    return runBash(command, spawned, timeout, ctx, call.signal, call.onOutput);
  }, {
    kind: "exec",
    shell: true,
    sandboxed: Boolean(ctx.sandbox),
    ...(ctx.sandbox ? { warm: () => ctx.sandbox!.warm() } : {}),
    // A background call says so where the user approves it and in the transcript.
    describe: (args) => ({ title: `${strArg(args, "command") ?? "bash"}${args.background === true ? " (background job)" : ""}`, locations: [] }),
  });
}

/** The bash tool's description, with what the sandbox does to commands when it is on. */
function describe(ctx: ToolContext): string {
  if (!ctx.sandbox) return description;
  // Not the temp directory's path: the policy (and the directory) is made on the first call, not for the description.
  return `${description}
Commands run in a sandbox: writes outside ${ctx.workspace} and $TMPDIR (a temporary directory of the session) fail with "Read-only file system"; credential files and .env files are unreadable; files other programs run code from (.bashrc and other shell profiles, .gitconfig, .git/hooks, .git/config, .vscode, .idea, .mcp.json, .keen) cannot be written, and one the command creates is removed after it; the network reaches only allowed hosts (a blocked host is reported in the result); processes end with the command.`;
}

/** A spawned command: sandboxed, it also has a start (`begin`), a stop inside and an end report. */
type Launched = { child: ChildProcess } & Partial<SpawnedCommand>;

function runBash(
  command: string,
  launched: Launched,
  timeout: number,
  ctx: ToolContext,
  signal: AbortSignal,
  onOutput: ((chunk: string) => void) | undefined,
): Promise<ToolResult> {
  const started = Date.now();
  const output = new CappedOutput(BASH_OUTPUT_CAP / 2);
  // Redacted before the cap: a cut through a secret would hand the model part of it
  // (and a model choosing the padding could collect it piece by piece).
  const secrets = ctx.redactor?.stream();
  // The stderr pipe stays for what bash prints before `exec 2>&1` runs (syntax errors).
  const { child } = launched;
  // Both are pipes, however it was spawned.
  const stdout = child.stdout!;
  const stderr = child.stderr!;
  const sandboxed = launched.finish ? (launched as SpawnedCommand) : undefined;
  const pid = child.pid;
  if (pid !== undefined) trackGroup(pid);

  return new Promise<ToolResult>((done) => {
    let stopped: "timeout" | "abort" | undefined;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let spawnError: Error | undefined;
    let exited = false;
    let finished = false;
    const timers: NodeJS.Timeout[] = [];

    const stop = (why: "timeout" | "abort") => {
      // After bash exited on its own, a late timer or abort must not relabel the result.
      if (stopped || exited || pid === undefined) return;
      stopped = why;
      // Sandboxed, the group is bubblewrap, which would end everything inside at once: the command's processes get the TERM.
      if (!sandboxed?.terminate(pid)) signalGroup(pid, "SIGTERM");
      timers.push(setTimeout(() => signalGroup(pid, "SIGKILL"), KILL_GRACE_MS));
    };
    const onAbort = () => stop("abort");
    timers.push(setTimeout(() => stop("timeout"), timeout));
    signal.addEventListener("abort", onAbort, { once: true });

    const onData = (raw: string, redacted = false) => {
      const chunk = secrets && !redacted ? secrets.push(raw) : raw;
      if (chunk === "") return;
      output.push(chunk);
      try {
        onOutput?.(chunk);
      } catch {
        // A failing subscriber must not crash Keen from inside a stream handler.
      }
    };
    stdout.setEncoding("utf8").on("data", onData);
    stderr.setEncoding("utf8").on("data", onData);

    const finish = () => {
      if (finished) return;
      finished = true;
      for (const t of timers) clearTimeout(t);
      // Leftovers of a stopped command that outlived the grace period, or left the pipes early.
      if (pid !== undefined) signalGroup(pid, "SIGKILL");
      signal.removeEventListener("abort", onAbort);
      if (pid !== undefined) untrackGroup(pid);
      stdout.destroy();
      stderr.destroy();
      const rest = secrets?.end();
      if (rest) onData(rest, true);
      const blocked = sandboxed?.finish();
      if (blocked) onData(`\n${blocked}`, true);
      const { text, truncated } = output.result();
      // For UIs: how many lines the command printed, apart from Keen's note on how it ended.
      const details: Record<string, unknown> = {
        command, exit_code: exitCode, truncated, duration_ms: Date.now() - started, output_lines: countLines(text),
      };
      if (spawnError) return done(fail(`Could not run bash: ${spawnError.message}`, details));
      let note: string | undefined;
      if (stopped === "timeout") note = `timed out after ${timeout / 1000}s; the command and its child processes were killed`;
      else if (stopped === "abort") note = "aborted; the command and its child processes were killed";
      else if (exitCode !== 0 && exitCode !== null) note = `exit code ${exitCode}`;
      else if (exitSignal) note = `killed by signal ${exitSignal}`;
      if (note) details.note = note;
      const body = text === "" ? "(no output)" : text;
      done({ content: note ? `${body}\n\n[${note}]` : body, is_error: note !== undefined, details });
    };

    child.on("exit", (code, sig) => {
      exited = true;
      exitCode = code;
      exitSignal = sig;
      // Whatever the command left running in its group (background jobs) dies with it; a
      // stopped command's children keep their SIGTERM grace period instead.
      if (pid !== undefined && !stopped) signalGroup(pid, "SIGKILL");
      timers.push(setTimeout(finish, DRAIN_MS));
    });
    child.on("close", finish);
    child.on("error", (err) => {
      spawnError = err;
      finish();
    });
    // Everything listens: the command may start (a sandbox started ahead waits for it until now).
    launched.begin?.();
    // Aborted while its sandbox was being made: the abort event came before the listener.
    if (signal.aborted) stop("abort");
  });
}
