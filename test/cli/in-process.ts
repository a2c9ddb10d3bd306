import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { main } from "../../app/cli/main.js";
import { closePreconnect } from "../../app/providers/preconnect.js";
import { openStore } from "../../storage/level-store.js";
import type { MockLLMServer } from "../fakes/mock-llm-server.js";
import { makeTempDir } from "../temp.js";

/**
 * Keen's commands run in this process, through the same main() the bundle runs: a case costs
 * milliseconds instead of a Keen start (~0.4 s of CPU). For what is decided inside Keen (formats,
 * resolution of ids, store errors, resume semantics); the e2e files keep one spawned case per
 * contract of the real process (exit code, the stdout/stderr split, signals, kills).
 *
 * Only text turns and store commands belong here: a tool call would spawn its command, and a unit
 * test spawns nothing. Runs pass `--sandbox off` (no tool runs, so the sandbox plays no role and must
 * not warm up in the test process).
 */

/** A finished in-process command. */
export interface InProcessRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** A KEEN_HOME with a user config and a workspace, like the e2e sandbox, with env pointing at `server`. */
export function makeInProcessSandbox(server: MockLLMServer, config: Record<string, unknown> = {}) {
  const root = realpathSync(makeTempDir("keen-inproc-"));
  const home = join(root, "keen-home");
  const workspace = join(root, "ws");
  mkdirSync(home, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(home, "config.json"), JSON.stringify({ stdinGraceMs: 300, retry: { baseDelayMs: 10 }, ...config }));
  const env: Record<string, string | undefined> = {
    KEEN_HOME: home, HOME: join(root, "user-home"), XDG_DATA_HOME: undefined, XDG_CONFIG_HOME: undefined,
    ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url, OPENAI_API_KEY: undefined, OPENAI_BASE_URL: `${server.url}/v1`,
    HTTPS_PROXY: undefined, HTTP_PROXY: undefined, https_proxy: undefined, http_proxy: undefined,
  };
  /** main(args) with this sandbox's env (merged with `extra`) and `cwd` (default: the workspace); stdout and stderr captured. */
  const keen = (args: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}) =>
    inProcess(args, { ...env, ...options.env }, options.cwd ?? workspace);
  /** `keen run --format json --no-stdin --sandbox off …`, which must succeed; returns the parsed result. */
  const runJson = async (args: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}) => {
    const r = await keen(["run", "--format", "json", "--no-stdin", "--sandbox", "off", ...args], options);
    if (r.code !== 0) throw new Error(`keen run ${args.join(" ")}: exit ${r.code}: ${r.stderr}`);
    return JSON.parse(r.stdout) as Record<string, any>;
  };
  const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value));
  /** The stored sessions, newest first. */
  const sessions = async (): Promise<Record<string, any>[]> => plain(await openStore(home).list());
  return { root, home, workspace, env, keen, runJson, sessions };
}

/** Serialises the commands: each one owns the process's env, cwd, stdout and stderr while it runs. */
let queue: Promise<unknown> = Promise.resolve();

/** main(args) in this process with `env` merged into process.env (undefined deletes) and `cwd` as the working directory; stdout and stderr captured; all restored after. */
export function inProcess(args: string[], env: Record<string, string | undefined>, cwd: string): Promise<InProcessRun> {
  const next = queue.then(() => captured(args, env, cwd));
  queue = next.catch(() => {});
  return next;
}

async function captured(args: string[], env: Record<string, string | undefined>, dir: string): Promise<InProcessRun> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const cwd = process.cwd();
  const stdout = collector();
  const stderr = collector();
  // process.stdout and process.stderr themselves are swapped, not their write(): the test
  // runner's reporter keeps writing to the real stdout it holds, and its lines stay out of ours.
  const descriptors = { stdout: Object.getOwnPropertyDescriptor(process, "stdout")!, stderr: Object.getOwnPropertyDescriptor(process, "stderr")! };
  for (const [k, v] of Object.entries(env)) (v === undefined ? delete process.env[k] : (process.env[k] = v));
  process.chdir(dir);
  Object.defineProperty(process, "stdout", { configurable: true, enumerable: true, get: () => stdout.stream });
  Object.defineProperty(process, "stderr", { configurable: true, enumerable: true, get: () => stderr.stream });
  try {
    return { code: await main(args), stdout: stdout.text(), stderr: stderr.text() };
  } finally {
    Object.defineProperty(process, "stdout", descriptors.stdout);
    Object.defineProperty(process, "stderr", descriptors.stderr);
    process.chdir(cwd);
    for (const [k, v] of Object.entries(saved)) (v === undefined ? delete process.env[k] : (process.env[k] = v));
    // A run's early connection to the provider (app/providers/preconnect.ts) is process-wide and ends with a
    // real Keen's process: dropped here, so no later test in this process finds it (or its dispatcher) open.
    await closePreconnect();
  }
}

/** A stream that keeps what is written to it (not a TTY). */
function collector() {
  let text = "";
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}
