// Decides, for one node binary, whether Keen starts from a V8 start-up
// snapshot (dist/keen.blob) or from the plain bundle (dist/keen.cjs), by
// measuring both on the machine at hand. scripts/build.mjs runs it after a
// build; bin/keen starts it in the background (`--background`) when dist/
// holds no decision for the `node` on PATH and dist/ is writable, so a
// package installed without its scripts, or a checkout after a Node switch,
// gets its decision on first use. The build copies this file into dist/.
//
// Usage: node snapshot.mjs [--background] <dist>
// KEEN_SNAPSHOT=on keeps the snapshot without measuring, off keeps none;
// anything else measures (the default).
//
// What it leaves in <dist>, read by bin/keen with shell builtins only:
//   keen.blob         the snapshot, present only when it won for this node
//   startup-node      a symlink to the node binary the decision is for
//   startup-node.mtime  that binary's modification time (an upgrade in place changes it)
//   startup.json      the figures behind the decision (for people and `npm run bench`)
// Dependency-free on purpose: it ships in the npm package, which has no devDependencies.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Alternating runs of each way after one warm-up each; the median decides. KEEN_SNAPSHOT_RUNS
 * sets another count: the tests of the launcher and the package, which check that a decision is
 * made and used rather than how well it is measured, use 1.
 */
const RUNS = Math.max(1, Math.floor(Number(process.env.KEEN_SNAPSHOT_RUNS)) || 7);

/**
 * Builds and measures in `dist`, then records the decision for this node.
 * Returns what was decided; never throws for a snapshot that cannot be built
 * (that is a decision too: the plain bundle).
 */
export function decideStartup(dist, mode = process.env.KEEN_SNAPSHOT ?? "auto", carried = {}) {
  const bundle = join(dist, "keen.cjs");
  const before = statSync(bundle, { bigint: true });
  const blob = join(dist, "keen.blob");
  // The old decision goes first, so a keen started meanwhile never pairs this node with a half-written blob.
  rmSync(join(dist, "startup-node"), { force: true });
  rmSync(blob, { force: true });
  const result = { node: process.execPath, version: process.version, mode, date: new Date().toISOString(), ...carried };
  warmCodeCache(dist);
  // Built and measured in dist/ itself: started from a blob, the bundle finds its side files next to the blob.
  const staged = join(dist, `keen.blob.tmp-${process.pid}`);
  try {
    if (mode !== "off") {
      execFileSync(process.execPath, ["--snapshot-blob", staged, "--build-snapshot", bundle], { stdio: ["ignore", "ignore", "pipe"] });
      result.blobBytes = statSync(staged).size;
      if (mode !== "on") Object.assign(result, measure(dist, staged));
    }
  } catch (error) {
    result.error = String(error.stderr || error.message).trim().split("\n").slice(-3).join(" ");
  }
  const keep = !result.error && (mode === "on" || (mode !== "off" && snapshotWins(result)));
  result.chosen = keep ? "snapshot" : "plain";
  const after = statSync(bundle, { bigint: true });
  if (after.ino !== before.ino || after.mtimeNs !== before.mtimeNs) {
    // A build replaced dist/ meanwhile: this blob is of the old bundle, and the new build decides itself.
    rmSync(staged, { force: true });
    return { ...result, chosen: "none", error: "the bundle changed while measuring" };
  }
  if (keep) renameSync(staged, blob);
  else rmSync(staged, { force: true });
  writeFileSync(join(dist, "startup.json"), `${JSON.stringify(result, null, 2)}\n`);
  recordNode(dist);
  return result;
}

/**
 * The plain bundle's code cache for this node (dist/start.cjs reads it): written by a start that
 * compiles what a run needs (the snapshot's warm-up) and exits. Without it, the first start writes
 * one holding whatever that command compiled (for `--version`, far less than a run uses).
 */
function warmCodeCache(dist) {
  if (!existsSync(join(dist, "start.cjs"))) return;
  spawnSync(process.execPath, [join(dist, "start.cjs")], { stdio: "ignore", env: { ...process.env, KEEN_CODE_CACHE: "warm" } });
}

/**
 * The snapshot is kept only when its runs are clearly faster: by more than 5%, about the spread of
 * these medians on a loaded 2-core machine. A level result is noise, and a blob costs 7.5 MB of disk
 * and memory for nothing then.
 */
export const snapshotWins = ({ snapshotMs, plainMs }) => snapshotMs < plainMs * 0.95;

/** What `measure` times, recorded in startup.json (a build reuses only a decision measured the same way). */
export const MEASURED = "keen run --replay demo";

/**
 * A run started both ways: `keen run --replay demo` (the shipped cassette: no network, no key, the
 * demo's workspace in a throw-away temporary directory, no user config), alternating so load drift
 * hits both alike; medians of spawn to exit in ms. A run, not `keen --version`: the snapshot holds the
 * evaluated modules, but what a run calls afterwards compiles there without a code cache. Timed with
 * `--version` the snapshot came out level or ahead on a 2-core machine (Node 20: 97 against 97 ms,
 * 105 against 107 ms) while some paired runs of the first delta had it 16 ms slower (others level):
 * `--version` runs none of what a run pays for. bin/keen answers `--version` itself anyway
 * (start.cjs's shortcut).
 */
function measure(dist, blob) {
  const run = ["run", "--replay", "demo", "--replay-speed", "0", "--sandbox", "off", "--headless"];
  const ways = {
    snapshotMs: [process.execPath, "--snapshot-blob", blob, "--", ...run],
    // The plain bundle as bin/keen starts it: through start.cjs and its code cache (the warm-up run writes it).
    plainMs: [process.execPath, join(dist, existsSync(join(dist, "start.cjs")) ? "start.cjs" : "keen.cjs"), ...run],
  };
  const home = mkdtempSync(join(tmpdir(), "keen-startup-"));
  const times = { snapshotMs: [], plainMs: [] };
  try {
    for (let i = -1; i < RUNS; i++) {
      for (const [key, [command, ...args]] of Object.entries(ways)) {
        const started = process.hrtime.bigint();
        const result = spawnSync(command, args, {
          stdio: ["ignore", "ignore", "pipe"], encoding: "utf8", env: { PATH: process.env.PATH, HOME: home, KEEN_HOME: home, TMPDIR: home },
        });
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        if (result.status !== 0) throw Object.assign(new Error(`${key} run failed`), { stderr: result.stderr });
        if (i >= 0) times[key].push(ms);
      }
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  const median = (list) => list.sort((a, b) => a - b)[Math.floor(list.length / 2)];
  return { runs: RUNS, measured: MEASURED, snapshotMs: median(times.snapshotMs), plainMs: median(times.plainMs) };
}

/** The node this decision is for: a symlink (bin/keen tests it with `-ef`) and its mtime, the link last. */
function recordNode(dist) {
  const mtimeFile = join(dist, "startup-node.mtime");
  writeFileSync(mtimeFile, `the mtime of ${process.execPath} (${process.version}) when Keen measured its start-up\n`);
  const { atime, mtime } = statSync(process.execPath);
  utimesSync(mtimeFile, atime, mtime);
  // utimes takes microseconds at best; the launcher compares with -nt/-ot, so copy the exact time with touch where it can.
  spawnSync("touch", ["-r", process.execPath, mtimeFile], { stdio: "ignore" });
  if (statSync(mtimeFile, { bigint: true }).mtimeNs !== statSync(process.execPath, { bigint: true }).mtimeNs) {
    throw new Error(`could not copy the mtime of ${process.execPath} to ${mtimeFile}`);
  }
  const link = join(dist, `startup-node.tmp-${process.pid}`);
  rmSync(link, { force: true });
  symlinkSync(process.execPath, link);
  renameSync(link, join(dist, "startup-node"));
}

/** One decision at a time per dist/: a lock directory holding its owner's pid; a dead owner's lock is taken over. */
function withLock(dist, work) {
  const lock = join(dist, "snapshot.lock");
  try {
    mkdirSync(lock);
  } catch {
    let owner;
    try {
      owner = Number(readFileSync(join(lock, "pid"), "utf8"));
      process.kill(owner, 0);
      return; // another process is deciding
    } catch (error) {
      if (owner === undefined || error.code !== "ESRCH") return; // lock being made right now, or not ours to judge
      rmSync(lock, { recursive: true, force: true });
      try {
        mkdirSync(lock);
      } catch {
        return;
      }
    }
  }
  try {
    writeFileSync(join(lock, "pid"), String(process.pid));
    return work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const background = args[0] === "--background";
  const dist = resolve(args[background ? 1 : 0] ?? ".");
  if (background) {
    // Detached into its own session: a Ctrl-C meant for keen does not stop it, and keen does not wait for it.
    spawn(process.execPath, [fileURLToPath(import.meta.url), dist], { detached: true, stdio: "ignore" }).unref();
  } else {
    withLock(dist, () => decideStartup(dist));
  }
}
