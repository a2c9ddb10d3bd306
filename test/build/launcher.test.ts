/**
 * bin/keen and what `npm run build` leaves in dist/ (which `npm test` builds
 * first): the bundle, the start-up decision for the node that built it
 * (dist/snapshot.mjs: a snapshot only where it starts faster), and the check
 * that a decision only meets the node binary it was made for. Each case runs a
 * copy of bin/ and dist/ (node_modules linked) so it can change files without
 * touching the checkout; `node` on PATH is the node running the tests.
 * Which way bin/keen starts for each state of dist/ (another node's decision, an
 * upgrade in place, no decision, symlinks, no bundle, no node) is
 * test/build/launcher-decisions.test.ts's, with a stand-in node; here the real node starts
 * from a real snapshot, and the background measurement really decides.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { MEASURED, snapshotWins } from "../../scripts/snapshot.mjs";
import { makeSandbox, runKeen, type KeenRun } from "../e2e/harness.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeTempDir } from "../temp.js";

const ROOT = resolve(import.meta.dirname, "../..");
const DIST = join(ROOT, "dist");
const PATH = [dirname(process.execPath), process.env.PATH].join(delimiter);
const VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;

const server = useMockLLMServer();

/** A copy of bin/ and dist/ (symlinks and mtimes kept) next to a link to node_modules. */
function copyCheckout(): { bin: string; dist: string } {
  const root = makeTempDir("keen-launcher-");
  cpSync(join(ROOT, "bin"), join(root, "bin"), { recursive: true });
  cpSync(DIST, join(root, "dist"), { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  return { bin: join(root, "bin", "keen"), dist: join(root, "dist") };
}

/** Makes the copy's start-up decision for the node running the tests: `on` keeps a snapshot, `off` none. */
function decide(dist: string, mode: "on" | "off"): void {
  execFileSync(process.execPath, [join(dist, "snapshot.mjs"), dist], { env: { ...process.env, KEEN_SNAPSHOT: mode }, stdio: ["ignore", "ignore", "pipe"] });
  assert.equal(existsSync(join(dist, "keen.blob")), mode === "on");
}

/**
 * Waits until the launcher's background measurement has recorded a decision
 * for the node running the tests (dist/startup-node is written last) and let
 * go of its lock.
 */
async function decision(dist: string): Promise<Record<string, unknown>> {
  const end = Date.now() + 300_000;
  const recorded = () => {
    try {
      return statSync(join(dist, "startup-node")).ino === statSync(process.execPath).ino;
    } catch {
      return false;
    }
  };
  while (!(recorded() && !existsSync(join(dist, "snapshot.lock")))) {
    if (Date.now() > end) throw new Error(`no start-up decision in ${dist}: ${readdirSync(dist).join(" ")}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return JSON.parse(readFileSync(join(dist, "startup.json"), "utf8"));
}

/**
 * `keen run hi` answered by the mock. A measurement the launcher starts in the background times
 * one run each way (KEEN_SNAPSHOT_RUNS=1): these tests check that a decision is made and used;
 * the build's own decision, checked in the first test, is measured in full.
 */
async function answer(bin: string, env: Record<string, string> = {}): Promise<KeenRun> {
  const sb = makeSandbox(server.url);
  server.enqueue({ text: "Hello from the mock." });
  return sb.run(["run", "hi"], { bin, env: { PATH, KEEN_SNAPSHOT_RUNS: "1", ...env } });
}

test("the build leaves the bundle and a start-up decision, measured, for the node that built it", () => {
  for (const file of ["keen.cjs", "snapshot.mjs", "startup-node", "startup-node.mtime", "startup.json"]) assert.ok(existsSync(join(DIST, file)), `dist/${file}`);
  const builder = statSync(join(DIST, "startup-node"), { bigint: true });
  const running = statSync(process.execPath, { bigint: true });
  assert.equal(builder.ino, running.ino, "npm test builds with the node that runs it");
  assert.equal(statSync(join(DIST, "startup-node.mtime"), { bigint: true }).mtimeNs, running.mtimeNs);
  const startup = JSON.parse(readFileSync(join(DIST, "startup.json"), "utf8"));
  assert.equal(startup.version, process.version);
  if (startup.mode === "auto" && !startup.error) {
    assert.ok(startup.snapshotMs > 0 && startup.plainMs > 0, JSON.stringify(startup));
    // Timed on a run (the replay demo): what a start-up costs before a request, not just `--version`.
    assert.equal(startup.measured, MEASURED);
    assert.equal(startup.chosen, snapshotWins(startup) ? "snapshot" : "plain");
  }
  assert.equal(existsSync(join(DIST, "keen.blob")), startup.chosen === "snapshot", "the blob is kept only when it won");
});

test("the ACP SDK is a side bundle that only `keen acp` requires: not in keen.cjs, not in the snapshot", () => {
  const bundle = readFileSync(join(DIST, "keen.cjs"), "utf8");
  assert.ok(existsSync(join(DIST, "acp-sdk.cjs")));
  assert.ok(bundle.includes('require("./acp-sdk.cjs")'));
  // A method name only the SDK's tables spell out.
  assert.ok(!bundle.includes("session/request_permission"), "the SDK's code is not in the main bundle");
  assert.ok(readFileSync(join(DIST, "acp-sdk.cjs"), "utf8").includes("session/request_permission"));
});

test("with a snapshot decision for this node, bin/keen starts from the snapshot; KEEN_SNAPSHOT=off runs the plain bundle", async () => {
  const copy = copyCheckout();
  decide(copy.dist, "on");
  const ok = await answer(copy.bin);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, "Hello from the mock.\n");
  // The build may keep no snapshot on this machine, so the e2e tests may all run the plain bundle:
  // here the snapshot finds what lies beside it (the demo cassette, the store's native prebuild) and runs tools.
  const sb = makeSandbox(server.url);
  const demo = await sb.run(["run", "--replay", "demo", "--replay-speed", "0"], { bin: copy.bin, env: { PATH }, timeoutMs: 120_000 });
  assert.equal(demo.code, 0, demo.stderr);
  assert.match(demo.stdout, /Fixed\./);
  // Proof that the blob is what starts: a broken one now fails to load…
  writeFileSync(join(copy.dist, "keen.blob"), "not a snapshot");
  const broken = await runKeen(["protocol", "schema"], { bin: copy.bin, env: { PATH } });
  assert.notEqual(broken.code, 0);
  assert.equal(broken.stdout, "");
  // …unless the user turns snapshots off (a turn of the plain bundle is every other e2e test's, and code-cache.test.ts's).
  const off = await runKeen(["protocol", "schema"], { bin: copy.bin, env: { PATH, KEEN_SNAPSHOT: "off" } });
  assert.equal(off.code, 0, off.stderr);
  assert.equal(JSON.parse(off.stdout).title, "Keen JSON-lines protocol, one line");
  // `keen --version` never deserialises the blob (start.cjs answers it: test/build/launcher-shortcut.test.ts).
  const version = await runKeen(["--version"], { bin: copy.bin, env: { PATH } });
  assert.equal(version.code, 0, version.stderr);
  assert.equal(version.stdout, `${VERSION}\n`);
});

test("a decision for a node binary that is gone is not used: the bundle runs as a plain script and a new decision is made in the background", async () => {
  // The build's decision, re-pointed at a node that is gone, with a blob that would fail to load.
  const copy = copyCheckout();
  writeFileSync(join(copy.dist, "keen.blob"), "not a snapshot");
  rmSync(join(copy.dist, "startup-node"));
  symlinkSync(join(copy.dist, "uninstalled-node"), join(copy.dist, "startup-node"));
  const run = await runKeen(["--version"], { bin: copy.bin, env: { PATH, KEEN_SNAPSHOT_RUNS: "1" } });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, `${VERSION}\n`);
  const made = await decision(copy.dist);
  assert.equal(made.version, process.version);
  assert.equal(made.runs, 1, "measured with the runs the environment asked for");
  assert.equal(existsSync(join(copy.dist, "keen.blob")), made.chosen === "snapshot");
  const next = await answer(copy.bin);
  assert.equal(next.code, 0, next.stderr);
  assert.equal(next.stdout, "Hello from the mock.\n");
});
