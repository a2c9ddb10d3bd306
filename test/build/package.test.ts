/**
 * The npm package without the repository: `npm pack` of a copy of the
 * checkout (its prepack step builds dist/), the tarball's contents, then one
 * `npm install -g` into a temporary prefix with npm's default settings (npm 11
 * runs no install scripts for it) and `npx --package <tarball>`, each run from
 * a directory outside the checkout. npm never reaches the network: its registry
 * is a local one (test/fakes/npm-registry.ts) that offers the versions
 * package-lock.json pins and serves their tarballs from npm's cache, which
 * `npm ci` or `npm install` filled; what is installed is what a user's npm
 * resolves from those versions.
 * One file, one install each way: an install unpacks every dependency (~150 MB,
 * ~30 s of CPU), and the directory goes as soon as the test ends, not with the
 * test process, which the e2e runner keeps for the files after this one.
 */
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { createServer as createSocketServer } from "node:net";
import { sandboxSupport } from "../../app/sandbox/deps.js";
import { runKeen, type KeenRun } from "../e2e/harness.js";
import { startMockLLMServer } from "../fakes/mock-llm-server.js";
import { startNpmRegistry } from "../fakes/npm-registry.js";
import { TMUX_MISSING, TmuxKeen } from "../e2e/tmux.js";
import { makeTempDir, removeTempDir } from "../temp.js";

const ROOT = resolve(import.meta.dirname, "../..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const exec = promisify(execFile);
const root = makeTempDir("keen-package-");
// npm's own cache holds the registry packages; npx's installs (_npx) go into the test's directory.
const npmCache = join(root, "npm-cache");
mkdirSync(npmCache);
symlinkSync(join(process.env.npm_config_cache ?? join(homedir(), ".npm"), "_cacache"), join(npmCache, "_cacache"));
const registry = await startNpmRegistry(join(ROOT, "package-lock.json"), npmCache);
const prefix = join(root, "prefix");
const elsewhere = join(root, "elsewhere");
mkdirSync(elsewhere);
// The installed `keen` first, then the node running this test (the launcher runs the `node` on PATH).
const PATH = [join(prefix, "bin"), dirname(process.execPath), process.env.PATH].join(delimiter);
const env = {
  PATH,
  HOME: join(root, "home"),
  KEEN_HOME: join(root, "keen-home"),
  TMPDIR: join(root, "tmp"),
  npm_config_cache: npmCache,
  npm_config_registry: registry.url,
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
  // The launcher's first-run measurement times one start each way: what is checked is that a decision is made and kept.
  KEEN_SNAPSHOT_RUNS: "1",
  ANTHROPIC_API_KEY: undefined,
  OPENAI_API_KEY: undefined,
};
mkdirSync(env.TMPDIR);
const tmux: TmuxKeen[] = [];
/** The npx run, started beside the global install's checks; settled (never rejected) before the directory goes. */
let npxRun: Promise<{ out?: string; error?: unknown }> | undefined;
after(async () => {
  tmux.forEach((t) => t.kill());
  await npxRun;
  await registry.close();
  removeTempDir(root);
});

async function npm(args: string[], cwd: string, extra: Record<string, string> = {}): Promise<string> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const [key, value] of Object.entries({ ...env, ...extra })) {
    if (value === undefined) delete childEnv[key];
    else childEnv[key] = value;
  }
  // npm's scripts would inherit the test runner's own npm_* settings; only ours count.
  delete childEnv.npm_lifecycle_event;
  delete childEnv.npm_command;
  // stdin closed: `keen run` appends piped stdin to its prompt and would wait for an end that never comes.
  const child = spawn("npm", args, { cwd, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
  const [code] = (await once(child, "close")) as [number | null];
  if (code !== 0) {
    const hint = registry.misses.length ? `\n(the local registry lacked ${registry.misses.join(", ")}: not in package-lock.json, or not in npm's cache, which \`npm ci\` fills)` : "";
    throw new Error(`npm ${args.join(" ")} failed (${code}):\n${stdout}\n${stderr}${hint}`);
  }
  return stdout;
}

function keen(args: string[]): Promise<KeenRun> {
  return runKeen(args, { bin: join(prefix, "bin", "keen"), cwd: elsewhere, env, timeoutMs: 120_000 });
}

/** A copy of what the repository tracks to build from, beside a link to node_modules (for esbuild). */
function copyCheckout(): string {
  const copy = join(root, "checkout");
  for (const entry of ["app", "protocol", "storage", "themes", "scripts", "bin", "package.json", "package-lock.json", "README.md", "LICENSE", "tsconfig.json"]) {
    cpSync(join(ROOT, entry), join(copy, entry), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
  return copy;
}

async function waitForDecision(dist: string): Promise<Record<string, unknown>> {
  const end = Date.now() + 300_000;
  while (!(existsSync(join(dist, "startup-node")) && !existsSync(join(dist, "snapshot.lock")))) {
    if (Date.now() > end) throw new Error(`no start-up decision in ${dist}: ${readdirSync(dist).join(" ")}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return JSON.parse(readFileSync(join(dist, "startup.json"), "utf8"));
}

test("npm pack ships what runs and no tests; installed globally or run with npx, Keen works from any directory", { timeout: 900_000 }, async () => {
  const copy = copyCheckout();
  // KEEN_SNAPSHOT=off: the prepack build skips measuring; the tarball never carries a snapshot either way.
  await npm(["pack", "--pack-destination", root], copy, { KEEN_SNAPSHOT: "off" });
  const tarball = join(root, `keen-${pkg.version}.tgz`);
  const files = (await exec("tar", ["tzf", tarball])).stdout.trim().split("\n").map((f) => f.replace(/^package\//, "")).sort();
  for (const file of ["bin/keen", "dist/keen.cjs", "dist/start.cjs", "dist/tui.cjs", "dist/snapshot.mjs", "dist/demo.cassette.jsonl", "dist/search-worker.cjs", "dist/sandbox-runtime.cjs", "LICENSE", "README.md", "package.json"]) {
    assert.ok(files.includes(file), `${file} is in the tarball: ${files.join(" ")}`);
  }
  assert.deepEqual(files.filter((f) => !/^(bin|dist)\/|^(LICENSE|README\.md|package\.json)$/.test(f)), [], "nothing but bin/, dist/ and the package's papers");
  assert.deepEqual(files.filter((f) => /\.map$|keen\.blob|startup-node|startup\.json|snapshot\.lock|code-cache/.test(f)), [], "no source maps and no machine-specific start-up files");

  // npx installs the tarball into its own cache directory (here under the test's root) and runs the bin. It
  // shares nothing with the global install but npm's read-only cache, so it runs beside the checks below (its
  // own KEEN_HOME: two Keens never share a store here): the file's wall time is the longer of the two, not the sum.
  npxRun = npm(["exec", "--yes", "--package", tarball, "--", "keen", "run", "--replay", "demo"], elsewhere, {
    KEEN_SNAPSHOT: "off", KEEN_HOME: join(root, "keen-home-npx"),
  }).then((out) => ({ out }), (error) => ({ error }));
  await npm(["install", "-g", "--prefix", prefix, tarball], elsewhere);
  const dist = join(prefix, "lib", "node_modules", "keen", "dist");
  assert.ok(!existsSync(join(dist, "keen.blob")), "installed without scripts: no snapshot yet");

  // First run: the plain bundle, while the launcher starts measuring in the background.
  const version = await keen(["--version"]);
  assert.equal(version.code, 0, version.stderr);
  assert.equal(version.stdout, `${pkg.version}\n`);
  const decision = await waitForDecision(dist);
  assert.ok(decision.chosen === "snapshot" || decision.chosen === "plain", JSON.stringify(decision));
  assert.equal(existsSync(join(dist, "keen.blob")), decision.chosen === "snapshot");
  const again = await keen(["--version"]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout, `${pkg.version}\n`);

  // The replay opens the session store (classic-level's native prebuild, from the installed layout) and runs tools.
  const demo = await keen(["run", "--replay", "demo"]);
  assert.equal(demo.code, 0, demo.stderr);
  assert.match(demo.stdout, /Fixed\./);

  if (TMUX_MISSING) {
    process.stderr.write(`package test: TUI demo skipped: ${TMUX_MISSING}\n`);
  } else {
    const t = new TmuxKeen(["--replay", "demo", "--replay-speed", "0"], env, elsewhere, undefined, join(prefix, "bin", "keen"));
    tmux.push(t);
    await t.waitFor("> The test in this project fails.", 60_000);
    t.keys(["Enter"]);
    await t.waitFor(/Fixed\./, 60_000);
    t.keys(["C-d"]);
    await t.waitFor("[exit 0]", 30_000);
  }

  // A confined command from the installed package: the sandbox library's side bundle loads and finds
  // its seccomp helper in the installed @anthropic-ai/sandbox-runtime (a unix socket is refused).
  if (sandboxSupport().ok) {
    const server = await startMockLLMServer();
    const socket = join(root, "s.sock");
    const host = createSocketServer((s) => s.end());
    await new Promise<void>((done) => host.listen(socket, done));
    try {
      const probe = `${process.execPath} -e "require('net').connect(process.argv[1]).on('connect', () => console.log('connected')).on('error', (e) => console.log(e.code))" ${socket}`;
      server.enqueue({ toolCalls: [{ name: "bash", input: { command: probe } }] }, { text: "done" });
      const run = await runKeen(["run", "--headless", "--no-stdin", "--sandbox", "on", "go"], {
        bin: join(prefix, "bin", "keen"), cwd: elsewhere, timeoutMs: 120_000, env: { ...env, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url },
      });
      assert.equal(run.code, 0, run.stderr);
      const result = run.stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line)).find((line) => line.kind === "tool-result");
      assert.equal(result?.result, "EPERM\n", run.stdout);
    } finally {
      await new Promise((done) => host.close(done));
      await server.close();
    }
  } else {
    process.stderr.write("package test: sandboxed command skipped: no sandbox on this machine\n");
  }

  const npx = await npxRun;
  if (npx.error) throw npx.error;
  assert.match(npx.out!, /Fixed\./);
});
