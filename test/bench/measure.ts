/**
 * Process timing for `npm run bench`: spawn a command, time it from spawn to
 * exit, note when a chosen stdout line first appears, read its peak RSS, and
 * collect per-delta latency stamps. Statistics over several runs.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Environment for a child: `undefined` removes a variable. */
export type ChildEnv = Record<string, string | undefined>;

/** What one finished process showed. */
export interface ProcessSample {
  /** Spawn to exit (all stdio closed), ms. */
  wallMs: number;
  /** Spawn to the first stdout line that `firstLine` accepted, ms. */
  firstMs?: number;
  /** Peak resident set size, kB. */
  rssKb?: number;
  /** Latencies of stamped deltas, ms (see `latencyOf`). */
  latencies: number[];
}

/** Options for one timed process. */
export interface TimeOptions {
  env: ChildEnv;
  cwd?: string;
  /** Marks the line whose arrival is `firstMs`. */
  firstLine?: (line: string) => boolean;
  /** Lines whose `@<ms>;` stamps are read as send times (pass-through latency). */
  stampedLine?: (line: string) => boolean;
  /** Measure peak RSS too. */
  rss?: boolean;
}

const GNU_TIME = "/usr/bin/time";
const STAMP = /@([\d.]+);/g;

/**
 * How peak RSS is read. With GNU time the child runs under `/usr/bin/time -f %M`
 * (the kernel's ru_maxrss of the child, exact; time itself adds about a
 * millisecond of wall time, so the runs that measure RSS wrap floor and Keen
 * alike). Without it, /proc/<pid>/status VmHWM (the kernel's own high-water
 * mark) is polled every millisecond and the last value read before exit kept.
 */
export const RSS_METHOD = existsSync(GNU_TIME) ? "GNU time %M (ru_maxrss)" : "/proc/<pid>/status VmHWM, polled";

/** Runs `argv` to completion. Contract: rejects when it exits non-zero, with its stderr. */
export function timeProcess(argv: string[], options: TimeOptions): Promise<ProcessSample> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [key, value] of Object.entries(options.env)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  const useTime = options.rss && RSS_METHOD.startsWith("GNU");
  const rssDir = useTime ? mkdtempSync(join(tmpdir(), "keen-bench-rss-")) : undefined;
  const rssFile = rssDir ? join(rssDir, "rss") : undefined;
  const command = rssFile ? [GNU_TIME, "-f", "%M", "-o", rssFile, ...argv] : argv;

  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command[0]!, command.slice(1), { env, cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] });
    const sample: ProcessSample = { wallMs: 0, latencies: [] };
    let pending = "";
    let stderr = "";
    let polled = 0;
    const poll = options.rss && !useTime ? setInterval(() => (polled = Math.max(polled, readHwm(child.pid))), 1) : undefined;
    child.stdout.on("data", (chunk: Buffer) => {
      // One clock reading per read: every line in this chunk arrived now.
      const nowMs = performance.now();
      const nowEpoch = performance.timeOrigin + nowMs;
      pending += chunk.toString("utf8");
      let end: number;
      while ((end = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        if (sample.firstMs === undefined && options.firstLine?.(line)) sample.firstMs = nowMs - started;
        if (options.stampedLine?.(line)) {
          for (const match of line.matchAll(STAMP)) sample.latencies.push(nowEpoch - Number(match[1]));
        }
      }
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.on("error", reject);
    child.on("close", (code) => {
      sample.wallMs = performance.now() - started;
      if (poll) clearInterval(poll);
      if (rssFile) {
        sample.rssKb = Number(readFileSync(rssFile, "utf8").trim().split("\n").at(-1));
        rmSync(rssDir!, { recursive: true, force: true });
      } else if (options.rss) {
        sample.rssKb = polled;
      }
      if (code !== 0) reject(new Error(`${argv.join(" ")} exited ${code}\n${stderr}`));
      else resolve(sample);
    });
  });
}

function readHwm(pid: number | undefined): number {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** Median, min and max of a sample. */
export interface Stats {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function stats(values: number[]): Stats {
  if (values.length === 0) throw new Error("no samples");
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted.at(-1)!, n: sorted.length };
}

/** Nearest-rank percentile (p in 0–100). */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
