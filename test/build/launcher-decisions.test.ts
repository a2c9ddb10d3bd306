/**
 * bin/keen's decisions, case by case: which way it starts Keen (the snapshot, start.cjs, or keen.cjs
 * of a dist/ from before start.cjs) and whether it starts the start-up measurement in the background,
 * for each state dist/ can be in. `node` here is a stand-in, a two-line sh script first on PATH that
 * records how it was called, and dist/ holds empty files where the launcher only tests for them:
 * each case costs a `sh`, not a Keen start. What the real node does with these calls (a snapshot
 * that starts and runs tools, a measurement that decides) is test/build/launcher.test.ts's and
 * test/build/package.test.ts's.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { test } from "node:test";
import { makeTempDir } from "../temp.js";

const noScript = spawnSync("script", ["--version"]).status !== 0 && "needs script(1) from util-linux for a pseudo-terminal";
const LAUNCHER = resolve(import.meta.dirname, "../../bin/keen");
// Each call is one line, its arguments bracketed, written with one printf so a background call
// and the foreground one never interleave.
// What a case starts Keen with, unless it says otherwise: a command the program answers (not start.cjs's shortcut).
const ARGS = ["run", "hi"];
const FAKE_NODE = `#!/bin/sh\nline=; for a; do line="$line[$a]"; done\nprintf '%s\\n' "$line" >>"$FAKE_NODE_LOG"\nexit "\${FAKE_NODE_EXIT:-0}"\n`;

interface Layout {
  /** Whom dist/startup-node names: this node, another node that exists, a node that is gone, or no one. */
  decision?: "this" | "other" | "gone" | "none";
  /** startup-node.mtime against this node's mtime (an upgrade in place changes the node's). */
  mtime?: "same" | "older" | "newer";
  /** dist/keen.blob, there when the decision was "snapshot". */
  blob?: boolean;
  /** Files of dist/ that a case removes. */
  without?: Array<"keen.cjs" | "start.cjs" | "snapshot.mjs">;
}

/** An installed-like tree, <root>/keen/{bin/keen,dist/}, and the stand-in node in <root>/node-bin/. */
function tree(layout: Layout = {}) {
  const root = realpathSync(makeTempDir("keen-launcher-unit-"));
  const nodeBin = join(root, "node-bin");
  const node = join(nodeBin, "node");
  const bin = join(root, "keen", "bin", "keen");
  const dist = join(root, "keen", "dist");
  mkdirSync(nodeBin);
  mkdirSync(join(root, "keen", "bin"), { recursive: true });
  mkdirSync(dist);
  writeFileSync(node, FAKE_NODE, { mode: 0o755 });
  copyFileSync(LAUNCHER, bin);
  chmodSync(bin, 0o755);
  for (const file of ["keen.cjs", "start.cjs", "snapshot.mjs"]) if (!layout.without?.includes(file as never)) writeFileSync(join(dist, file), "");
  if (layout.blob) writeFileSync(join(dist, "keen.blob"), "");
  // Whole seconds, so the copy of the node's mtime is exact (the launcher compares with -nt and -ot).
  const nodeTime = 1_700_000_000;
  utimesSync(node, nodeTime, nodeTime);
  const decision = layout.decision ?? "none";
  if (decision !== "none") {
    const target = { this: node, other: "/bin/sh", gone: join(root, "uninstalled-node") }[decision];
    symlinkSync(target, join(dist, "startup-node"));
    writeFileSync(join(dist, "startup-node.mtime"), "");
    const offset = { same: 0, older: -3600, newer: 3600 }[layout.mtime ?? "same"];
    utimesSync(join(dist, "startup-node.mtime"), nodeTime + offset, nodeTime + offset);
  }
  return { root, bin, dist, nodeBin, log: join(root, "calls.log") };
}
type Tree = ReturnType<typeof tree>;

interface Launch {
  code: number | null;
  stdout: string;
  stderr: string;
  /** How the stand-in node was run in the foreground (exec'd by the launcher): its arguments. */
  started?: string[];
  /** Its background calls: the start-up measurement's arguments. */
  measured: string[][];
}

/**
 * Runs the launcher and waits until it and whatever it started in the background are done: the
 * child gets a fourth pipe, which the background call inherits, and "close" waits for every end of
 * it. So "nothing measured" is known, not guessed after a delay.
 */
async function launch(t: Tree, options: { args?: string[]; env?: Record<string, string>; command?: string; cwd?: string } = {}): Promise<Launch> {
  rmSync(t.log, { force: true });
  const env = { PATH: [t.nodeBin, "/usr/bin", "/bin"].join(delimiter), FAKE_NODE_LOG: t.log, ...options.env };
  const child = spawn(options.command ?? t.bin, options.args ?? ARGS, { cwd: options.cwd ?? t.root, env, stdio: ["ignore", "pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (d) => (stdout += d));
  child.stderr!.setEncoding("utf8").on("data", (d) => (stderr += d));
  const [code] = (await once(child, "close")) as [number | null];
  const calls = existsSync(t.log) ? readFileSync(t.log, "utf8").split("\n").filter(Boolean).map((line) => line.slice(1, -1).split("][")) : [];
  const isMeasurement = (call: string[]) => call[0].endsWith("/snapshot.mjs");
  const foreground = calls.filter((call) => !isMeasurement(call));
  assert.ok(foreground.length <= 1, `one foreground start at most: ${JSON.stringify(calls)}`);
  return { code, stdout, stderr, started: foreground[0], measured: calls.filter(isMeasurement) };
}

/** The call's paths resolved, so `<dist>/../dist/x` and `<dist>/x` compare equal. */
const paths = (call: string[] | undefined) => call?.map((a) => (a.startsWith("/") ? resolve(a) : a));
const plain = (t: Tree, args = ARGS) => [join(t.dist, "start.cjs"), ...args];
const fromSnapshot = (t: Tree, args = ARGS) => ["--snapshot-blob", join(t.dist, "keen.blob"), "--", ...args];
const measurement = (t: Tree) => [[join(t.dist, "snapshot.mjs"), "--background", t.dist]];

test("a snapshot decision for this node: starts from dist/keen.blob and measures nothing", async () => {
  const t = tree({ decision: "this", blob: true });
  const run = await launch(t);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(paths(run.started), fromSnapshot(t));
  assert.deepEqual(run.measured, []);
});

test("--version, -V, and --help, -h off a terminal, never start from the snapshot: start.cjs answers them without the bundle", async () => {
  const t = tree({ decision: "this", blob: true });
  for (const flag of ["--version", "-V", "--help", "-h"]) {
    const run = await launch(t, { args: [flag] });
    assert.deepEqual(paths(run.started), plain(t, [flag]), flag);
    assert.deepEqual(run.measured, [], flag);
  }
  // Only those exact argv: anything else is the program's, and so the snapshot's.
  for (const args of [["--version", "extra"], ["-V", "-V"], ["--versionx"], ["-h", "run"], []]) {
    const run = await launch(t, { args });
    assert.deepEqual(paths(run.started), fromSnapshot(t, args), JSON.stringify(args));
  }
  const off = await launch(t, { args: ["--version"], env: { KEEN_SHORTCUT: "off" } });
  assert.deepEqual(paths(off.started), fromSnapshot(t, ["--version"]), "KEEN_SHORTCUT=off");
});

test("--help at a terminal starts from the snapshot: the program wraps help to the terminal's width", { skip: noScript }, async () => {
  const t = tree({ decision: "this", blob: true });
  const run = await launch(t, { command: "script", args: ["-qec", `${t.bin} --help`, "/dev/null"] });
  assert.equal(run.code, 0, run.stdout);
  assert.deepEqual(paths(run.started), fromSnapshot(t, ["--help"]));
});

test("a shortcut argv with no decision yet still starts the measurement for the next runs", async () => {
  const t = tree({ decision: "none" });
  const run = await launch(t, { args: ["--version"] });
  assert.deepEqual(paths(run.started), plain(t, ["--version"]));
  assert.deepEqual(run.measured.map(paths), measurement(t));
});

test("a plain decision for this node: runs start.cjs and measures nothing more", async () => {
  const t = tree({ decision: "this" });
  const run = await launch(t);
  assert.deepEqual(paths(run.started), plain(t));
  assert.deepEqual(run.measured, []);
});

test("KEEN_SNAPSHOT=off: start.cjs whatever dist/ holds, and no measurement", async () => {
  for (const layout of [{ decision: "this", blob: true }, { decision: "none" }, { decision: "gone", blob: true }] as Layout[]) {
    const t = tree(layout);
    const run = await launch(t, { env: { KEEN_SNAPSHOT: "off" } });
    assert.deepEqual(paths(run.started), plain(t), JSON.stringify(layout));
    assert.deepEqual(run.measured, [], JSON.stringify(layout));
  }
});

test("no decision yet: start.cjs now, and the measurement starts in the background for the next runs", async () => {
  const t = tree({ decision: "none" });
  const run = await launch(t);
  assert.deepEqual(paths(run.started), plain(t));
  assert.deepEqual(run.measured.map(paths), measurement(t));
});

test("a decision for another node binary that still exists is not used, and kept: start.cjs, no measurement", async () => {
  // Two nodes taking turns on one dist/ would otherwise re-measure at every turn.
  const t = tree({ decision: "other", blob: true });
  const run = await launch(t);
  assert.deepEqual(paths(run.started), plain(t));
  assert.deepEqual(run.measured, []);
});

test("a decision for a node binary that is gone is not used: start.cjs, and a new measurement", async () => {
  const t = tree({ decision: "gone", blob: true });
  const run = await launch(t);
  assert.deepEqual(paths(run.started), plain(t));
  assert.deepEqual(run.measured.map(paths), measurement(t));
});

test("a decision for this node's path with another modification time (an upgrade in place) is not used: start.cjs, and a new measurement", async () => {
  for (const mtime of ["older", "newer"] as const) {
    const t = tree({ decision: "this", blob: true, mtime });
    const run = await launch(t);
    assert.deepEqual(paths(run.started), plain(t), mtime);
    assert.deepEqual(run.measured.map(paths), measurement(t), mtime);
  }
});

test("a dist/ without snapshot.mjs measures nothing; one from before start.cjs runs keen.cjs itself", async () => {
  const noMeasure = tree({ decision: "none", without: ["snapshot.mjs"] });
  const a = await launch(noMeasure);
  assert.deepEqual(paths(a.started), plain(noMeasure));
  assert.deepEqual(a.measured, []);
  const old = tree({ decision: "this", without: ["start.cjs"] });
  const b = await launch(old);
  assert.deepEqual(paths(b.started), [join(old.dist, "keen.cjs"), ...ARGS]);
});

test("dist/ that this user cannot write gets no measurement", { skip: process.getuid?.() === 0 && "root may write anywhere" }, async () => {
  const t = tree({ decision: "none" });
  chmodSync(t.dist, 0o555);
  try {
    const run = await launch(t);
    assert.deepEqual(paths(run.started), plain(t));
    assert.deepEqual(run.measured, []);
  } finally {
    chmodSync(t.dist, 0o755);
  }
});

test("arguments reach node unchanged, and node's exit status is the launcher's", async () => {
  const t = tree({ decision: "this", blob: true });
  const args = ["run", "two words", "", "*", "--flag=$HOME"];
  const snap = await launch(t, { args, env: { FAKE_NODE_EXIT: "3" } });
  assert.equal(snap.code, 3);
  assert.deepEqual(paths(snap.started), fromSnapshot(t, args));
  const t2 = tree({ decision: "this" });
  const run = await launch(t2, { args, env: { FAKE_NODE_EXIT: "4" } });
  assert.equal(run.code, 4);
  assert.deepEqual(paths(run.started), plain(t2, args));
});

test("started through symlinks (as npm links bin/keen, relative or absolute, even chained) or a relative path, the launcher finds dist/", async () => {
  const t = tree({ decision: "this" });
  const links = join(t.root, "prefix", "bin");
  mkdirSync(links, { recursive: true });
  symlinkSync("../../keen/bin/keen", join(links, "keen")); // what `npm install -g` makes
  symlinkSync(t.bin, join(links, "absolute"));
  symlinkSync("keen", join(links, "chained"));
  for (const name of ["keen", "absolute", "chained"]) {
    const run = await launch(t, { command: join(links, name) });
    assert.equal(run.code, 0, `${name}: ${run.stderr}`);
    assert.deepEqual(paths(run.started), plain(t), name);
  }
  // $0 relative to the working directory: `keen/bin/keen` and, through a link, `prefix/bin/keen`.
  for (const command of ["keen/bin/keen", "prefix/bin/keen"]) {
    const run = await launch(t, { command, cwd: t.root });
    assert.deepEqual(paths(run.started), plain(t), command);
  }
});

test("without the bundle the launcher says how to build it, and starts nothing", async () => {
  const t = tree({ decision: "none", without: ["keen.cjs"] });
  const run = await launch(t);
  assert.equal(run.code, 1);
  assert.equal(run.stderr, "keen: the bundle is missing; run `npm install` or `npm run build` in the keen checkout\n");
  assert.equal(run.stdout, "");
  assert.equal(run.started, undefined);
  assert.deepEqual(run.measured, []);
});

test("without node on PATH the launcher says so", async () => {
  const t = tree({ decision: "none" });
  const run = await launch(t, { env: { PATH: "/nonexistent" } });
  assert.equal(run.code, 127);
  assert.equal(run.stderr, "keen: node is not on PATH (Keen needs Node.js 22.12 or newer)\n");
  assert.equal(run.stdout, "");
});
