import { spawn } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync, realpathSync, type Dirent } from "node:fs";
import { join, posix, resolve } from "node:path";
import { servedSteps } from "../fakes/mock-llm-server.js";
import { makeTempDir } from "../temp.js";

/** Path of the launcher under test: the real `bin/keen`, loading the bundle. */
export const KEEN_BIN = resolve(import.meta.dirname, "../../bin/keen");

/** A finished keen process. */
export interface KeenRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Options for one spawn. */
export interface SpawnOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Written to stdin then closed; `"open"` leaves a pipe open with nothing in it; default: /dev/null-like closed pipe. */
  stdin?: string | Buffer | "open";
  /** Called with the child once spawned (send signals, read live stdout). */
  onSpawn?: (child: import("node:child_process").ChildProcess) => void;
  timeoutMs?: number;
  /** The launcher to spawn (default: KEEN_BIN). */
  bin?: string;
}

/** A fresh KEEN_HOME, a workspace dir, and env pointing both SDKs at a mock server. */
export function makeSandbox(serverUrl: string, config: Record<string, unknown> = {}) {
  const root = realpathSync(makeTempDir("keen-e2e-"));
  const home = join(root, "keen-home");
  const workspace = join(root, "ws");
  mkdirSync(home, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  // Keen's own temporary files (the sandbox's sockets, session temp dirs) stay inside the sandbox, even from a Keen killed with SIGKILL.
  mkdirSync(join(root, "tmp"));
  writeFileSync(join(home, "config.json"), JSON.stringify({ stdinGraceMs: 300, retry: { baseDelayMs: 10 }, ...config }));
  const env: Record<string, string | undefined> = {
    KEEN_HOME: home,
    TMPDIR: join(root, "tmp"),
    HOME: join(root, "user-home"),
    ANTHROPIC_API_KEY: "test-key",
    ANTHROPIC_BASE_URL: serverUrl,
    OPENAI_API_KEY: undefined,
    OPENAI_BASE_URL: `${serverUrl}/v1`,
    HTTPS_PROXY: undefined, HTTP_PROXY: undefined, https_proxy: undefined, http_proxy: undefined,
  };
  /**
   * `runKeen` with this sandbox's env (merged with `options.env`) and the workspace as default
   * cwd. Fails when the run left something new in the workspace that nothing of the run
   * names (see `assertNothingLeft`).
   */
  const run = async (args: string[], options: SpawnOptions = {}) => {
    const before = listing(workspace);
    const r = await runKeen(args, { cwd: workspace, ...options, env: { ...env, ...options.env } });
    assertNothingLeft(workspace, before, [...args, typeof options.stdin === "string" ? options.stdin : "", r.stdout, r.stderr, ...servedSteps()]);
    return r;
  };
  /**
   * `keen <args>` through main() in this process (test/cli/in-process.ts), with this sandbox's env
   * (merged with `options.env`) and the workspace as default cwd, held to the same no-trace check as
   * `run`. For what Keen decides inside (its output, exit code, store, the processes it starts): a
   * case costs no Keen start (~0.4 s of CPU). Signals, stdin and the real process's own contract
   * need `run`. main() and the app are loaded on first use.
   */
  const main = async (args: string[], options: Pick<SpawnOptions, "env" | "cwd"> = {}) => {
    const before = listing(workspace);
    const { inProcess } = await import("../cli/in-process.js");
    const r = await inProcess(args, { ...env, ...options.env }, options.cwd ?? workspace);
    assertNothingLeft(workspace, before, [...args, r.stdout, r.stderr, ...servedSteps()]);
    return r;
  };
  // The sandbox's store, read in this process: a spawned `keen sessions list/show --json` costs ~0.5 s
  // of CPU, and tests look at the store after most runs. The store module is loaded on first use
  // (each e2e file is a process of its own; not every one reads the store). What Keen stores is
  // already redacted; the commands add short ids and redact again (for sessions an older Keen
  // wrote): run-store.test.ts and secrets.test.ts run the commands themselves.
  const store = async () => (await import("../../storage/level-store.js")).openStore(home);
  const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value));
  /** The stored sessions of this sandbox, newest first, as `keen sessions list --all --json` lists them (without short_id). */
  const sessions = async (): Promise<Record<string, any>[]> => plain(await (await store()).list());
  /** One stored session by id or unique prefix, as `keen sessions show <id> --json` prints it: `{ session, events }`. */
  const show = async (id: string): Promise<{ session: Record<string, any>; events: Record<string, any>[] }> => {
    const opened = await store();
    const session = await opened.resolve(id);
    return plain({ session, events: await opened.load(session.id) });
  };
  return { root, home, workspace, env, run, main, sessions, show };
}

/** The workspace's entries as relative paths; `.git` and `node_modules` are not looked into. */
export function listing(dir: string, rel = "", out = new Set<string>()): Set<string> {
  let entries: Dirent[];
  try {
    entries = readdirSync(join(dir, rel), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const path = rel ? posix.join(rel, entry.name) : entry.name;
    out.add(path);
    if (entry.isDirectory() && entry.name !== ".git" && entry.name !== "node_modules") listing(dir, path, out);
  }
  return out;
}

/**
 * Issue 23: Keen must leave nothing in a workspace that the scenario did not write. What a
 * run added is the scenario's when its name (the new entry whose parent was there before)
 * appears in what the run was given or said: its arguments and input, its output, or a
 * reply of the mock model (tool calls name the files they write). Anything else, such as
 * the sandbox's placeholder dotfiles, fails the run that left it.
 */
function assertNothingLeft(workspace: string, before: Set<string>, said: string[]): void {
  const text = said.join("\n");
  const left = [...listing(workspace)].filter((path) => {
    if (before.has(path)) return false;
    const parent = posix.dirname(path);
    if (parent !== "." && !before.has(parent)) return false;
    return !text.includes(posix.basename(path));
  });
  if (left.length) throw new Error(`keen left ${left.join(", ")} in the workspace ${workspace}: no argument, input, output or tool call of the run names ${left.length === 1 ? "it" : "them"}`);
}

/** Resolves once the child's stdout (accumulated) satisfies `until`. */
export function waitForStdout(child: import("node:child_process").ChildProcess, until: (stdout: string) => boolean): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    let seen = "";
    const onData = (d: Buffer | string) => {
      seen += d.toString();
      if (until(seen)) {
        child.stdout!.off("data", onData);
        resolvePromise(seen);
      }
    };
    child.stdout!.on("data", onData);
    child.once("close", () => reject(new Error(`keen exited before the expected output; stdout so far: ${seen}`)));
  });
}

/** A run that takes longer has hung: generous, since the suite shares 2 cores with other work (a hang costs this much, a pass nothing). */
const RUN_TIMEOUT_MS = 120_000;

/** Spawns `bin/keen` and collects its output. Contract: never leaves the child running. */
export function runKeen(args: string[], options: SpawnOptions = {}): Promise<KeenRun> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return new Promise((resolvePromise, reject) => {
    const child = spawn(options.bin ?? KEEN_BIN, args, { cwd: options.cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    if (options.stdin === undefined) child.stdin.end();
    else if (options.stdin !== "open") child.stdin.end(options.stdin);
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`keen ${args.join(" ")} did not exit within ${options.timeoutMs ?? RUN_TIMEOUT_MS} ms\nstderr: ${stderr}`));
    }, options.timeoutMs ?? RUN_TIMEOUT_MS);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (options.stdin === "open") child.stdin.destroy();
      resolvePromise({ code, signal, stdout, stderr });
    });
    options.onSpawn?.(child);
  });
}

/** Parses JSON lines, failing loudly on a bad line. */
export function parseLines(stdout: string): Record<string, any>[] {
  return stdout.split("\n").filter(Boolean).map((line) => {
    try {
      return JSON.parse(line);
    } catch {
      throw new Error(`not a JSON line: ${line}`);
    }
  });
}
