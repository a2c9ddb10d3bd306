/**
 * TUI figures for `npm run bench`:
 * - spawn to first drawn frame: bin/keen in a pseudo-terminal (`script`), from
 *   spawn to the first frame's hint text, against `node -e 0` in the same pty;
 * - keystroke-to-screen latency while a turn streams, and frame time with a
 *   100k-character transcript: in-process, the real startTui on a fake TTY
 *   (a scripted engine streams 200 deltas a second);
 * - peak RSS of `keen --resume` on a stored 10,000-event session, until its
 *   history is drawn (GNU time inside the pty).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { startTui } from "../../app/tui/start.js";
import { draft as d, FakeEngine } from "../fakes/fake-engine.js";
import { percentile, stats, type ChildEnv, type Stats } from "./measure.js";
import { inPty } from "./pty.js";
import { buildSession } from "./resume-10k.js";

/** A row for bench.ts's table. */
export interface TuiRow {
  name: string;
  unit: "ms" | "MB";
  keen: Stats;
  floor?: Stats;
  floorName?: string;
}

export async function benchFirstFrame(keenBin: string, env: ChildEnv, cwd: string, runs: number): Promise<TuiRow> {
  const keen: number[] = [];
  const floor: number[] = [];
  for (let i = -1; i < runs; i++) {
    const f = await inPty([process.execPath, "-e", "0"], {}, cwd, undefined);
    const k = await inPty([keenBin], env, cwd, /Type a prompt/);
    if (i >= 0) floor.push(f.firstMs), keen.push(k.firstMs);
  }
  return { name: "TUI: spawn → first frame", unit: "ms", keen: stats(keen), floor: stats(floor), floorName: "node -e 0 (pty)" };
}

/** Peak RSS of `keen --resume` on a 10k-event session, until the last answer is drawn. */
export async function benchResumeRss(keenBin: string, env: ChildEnv, cwd: string, runs: number, turns: number): Promise<TuiRow> {
  const dir = mkdtempSync(join(tmpdir(), "keen-bench-tui-resume-"));
  try {
    const session = await buildSession(dir, turns);
    const rss: number[] = [];
    const floor: number[] = [];
    for (let i = 0; i < runs; i++) {
      const file = join(dir, `rss-${i}`);
      await inPty(["/usr/bin/time", "-f", "%M", "-o", file, keenBin, "--resume", session.id, "--cwd", cwd], { ...env, KEEN_HOME: dir }, cwd, new RegExp(`In turn ${turns - 1} the`));
      rss.push(Number(readFileSync(file, "utf8").trim().split("\n").pop()) / 1024);
      await inPty(["/usr/bin/time", "-f", "%M", "-o", file, process.execPath, "-e", "0"], {}, cwd, undefined);
      floor.push(Number(readFileSync(file, "utf8").trim().split("\n").pop()) / 1024);
    }
    return { name: `TUI: peak RSS, resumed ${session.events / 1000}k events`, unit: "MB", keen: stats(rss), floor: stats(floor), floorName: "node -e 0" };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A TTY-looking pair of streams for an in-process TUI. */
function fakeTty(onWrite: (text: string) => void) {
  const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => {} });
  const stdout = Object.assign(new Writable({ write: (chunk, _e, cb) => (onWrite(chunk.toString()), cb()) }), { isTTY: true, columns: 120, rows: 40 });
  return { stdin, stdout };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * In-process: a transcript of `turns` earlier turns (~530 characters each: 190
 * make ~100k, 2 about 1k), then a turn streaming 200 deltas a second while a
 * key is typed every 40 ms. Returns keystroke latency percentiles (stdin write
 * to the first terminal write showing the key) and frame times.
 */
export async function benchInProcess(keys = 150, turns = 190): Promise<{ p50: number; p99: number; frames: number[] }> {
  const engine = new FakeEngine();
  const frames: number[] = [];
  let pendingKey: number | undefined;
  const latencies: number[] = [];
  const { stdin, stdout } = fakeTty((text) => {
    if (pendingKey !== undefined && text.includes("Q")) {
      latencies.push(performance.now() - pendingKey);
      pendingKey = undefined;
    }
  });
  const done = startTui({
    client: engine, stdin: stdin as never, stdout: stdout as never, env: {}, handleSignals: false, onFrame: (ms) => frames.push(ms),
    initial: { cwd: "/work/proj", model: "anthropic/claude-test", permissionMode: "ask" },
  });
  await sleep(300);
  const answer = "A paragraph of a long answer with **markdown**, `code` and words. ".repeat(8);
  for (let i = 0; i < turns; i++) {
    engine.emit({ ...d.user(`question ${i}`), replay: true } as never);
    engine.emit({ ...d.text(answer), replay: true } as never);
  }
  await sleep(200);
  frames.length = 0;
  engine.emit(d.user("stream"));
  const words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau".split(" ");
  let n = 0;
  const streamer = setInterval(() => engine.emit(d.delta(`${words[n++ % words.length]}${n % 40 === 0 ? "\n\n" : " "}`)), 5);
  for (let i = 0; i < keys; i++) {
    pendingKey = performance.now();
    stdin.write("Q");
    await sleep(40);
  }
  clearInterval(streamer);
  engine.emit(d.result());
  stdin.write("\x03");
  await sleep(50);
  stdin.write("\x04");
  await done;
  if (latencies.length < keys * 0.9) throw new Error(`saw ${latencies.length} of ${keys} keystrokes on screen`);
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), frames };
}
