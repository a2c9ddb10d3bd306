/**
 * The CLI runner's e2e sandbox: a fresh KEEN_HOME whose config points the
 * runner at the fake `claude` (test/fakes/fake-claude.mjs), which replays the
 * comma list of recorded fixtures in `scripts` and logs each run here.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import { buildSync } from "esbuild";
import { makeTempDir } from "../temp.js";
import { makeSandbox } from "./harness.js";

/**
 * The fake claude (test/fakes/fake-claude.mjs), bundled once per test process, as mcp-helpers.ts
 * bundles the fake MCP server: where it acts out the CLI's ask it loads the MCP SDK's client, ~0.55 s
 * of CPU from the SDK's and zod's many modules, less bundled. It finds its fixtures as
 * ../fixtures from its own file: a link beside the bundle's directory.
 */
const FAKE = (() => {
  const dir = makeTempDir("keen-fake-claude-");
  mkdirSync(join(dir, "fakes"));
  symlinkSync(resolve(import.meta.dirname, "../fixtures"), join(dir, "fixtures"));
  const outfile = join(dir, "fakes", "fake-claude.mjs");
  buildSync({
    entryPoints: [resolve(import.meta.dirname, "../fakes/fake-claude.mjs")], outfile,
    bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "error",
    banner: { js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);' },
  });
  chmodSync(outfile, 0o755);
  return outfile;
})();
export const RELAY_TOOL = "mcp__keen__approve";

export function sandbox(scripts: string, cli: Record<string, unknown> = {}, serverUrl = "http://127.0.0.1:9") {
  const box = makeSandbox(serverUrl, { agents: { defaults: { cli: { path: FAKE, ...cli } } } });
  const log = join(box.root, "claude-runs.jsonl");
  const env = { FAKE_CLAUDE_LOG: log, FAKE_CLAUDE_SCRIPTS: scripts, ANTHROPIC_API_KEY: undefined };
  const runs = (): { argv: string[]; stdin: string; pid: number; cwd: string; grandchild?: number; asks?: unknown[] }[] =>
    existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
  const run = (args: string[], options: Parameters<typeof box.run>[1] = {}) => box.run(args, { ...options, env: { ...env, ...options.env } });
  /** `run` through main() in this process (harness.ts `main`): Keen in process, the fake claude still a process of its own. */
  const main = (args: string[], options: Parameters<typeof box.main>[1] = {}) => box.main(args, { ...options, env: { ...env, ...options.env } });
  /** Live processes started for this sandbox (the fake claude, its children, the relay server): their env names its log. */
  const leftovers = () => readdirSync("/proc").filter((pid) => /^\d+$/.test(pid) && alive(Number(pid))).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, "utf8").includes(`FAKE_CLAUDE_LOG=${log}\0`);
    } catch {
      return false;
    }
  });
  return { ...box, env: { ...box.env, ...env }, run, main, runs, leftovers };
}

export const jsonl = (stdout: string) => stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, any>);
export const brief = (e: Record<string, any>) => (e.kind.endsWith("-delta") ? e.kind : `${e.kind}${e.tool_name ? `:${e.tool_name}` : ""}`);
/** Runs of one delta kind collapsed to one entry: the sequence without the CLI's chunking. */
export const collapse = (kinds: string[]) => kinds.filter((k, i) => !k.endsWith("-delta") || kinds[i - 1] !== k);

/** True while the process runs (a zombie nobody reaped yet counts as gone). */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
