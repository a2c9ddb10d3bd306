import { execFileSync, spawnSync } from "node:child_process";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, removeTempDir } from "../temp.js";
import { KEEN_BIN } from "./harness.js";

/** Why tmux tests cannot run here, or undefined when they can. */
export const TMUX_MISSING = spawnSync("tmux", ["-V"]).status === 0 ? undefined : "tmux is not installed (apt-get install -y tmux); real-terminal TUI tests skipped";

let count = 0;

/**
 * `bin/keen` in a real terminal: a detached tmux session on a socket of its
 * own (other tmux servers on the machine are never touched), driven with
 * send-keys and read with capture-pane.
 */
export class TmuxKeen {
  readonly socket = `keen-test-${process.pid}-${++count}`;
  readonly name = "keen";
  /** Everything the pane prints, appended by tmux (pipe-pane): waitFor reads the screen again only once it grew. */
  private readonly dir = makeTempDir("keen-tmux-");
  private readonly output = join(this.dir, "pane.out");

  constructor(args: string[], env: Record<string, string | undefined>, cwd: string, size = { cols: 120, rows: 40 }, bin = KEEN_BIN) {
    const all = Object.entries({ ...env, NCURSES_NO_UTF8_ACS: "1", TERM: "xterm-256color" });
    // env takes its -u options before any assignment.
    const vars = [
      ...all.filter(([, v]) => v === undefined).map(([k]) => `-u ${k}`),
      ...all.filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${shellQuote(v!)}`),
    ].join(" ");
    // The pane outlives keen so its exit status and last words can be read.
    const command = `cd ${shellQuote(cwd)} && env ${vars} ${shellQuote(bin)} ${args.map(shellQuote).join(" ")}; echo "[exit $?]"; sleep 600`;
    this.tmux("new-session", "-d", "-s", this.name, "-x", String(size.cols), "-y", String(size.rows), command);
    writeFileSync(this.output, "");
    this.tmux("pipe-pane", "-t", this.name, `cat >> ${shellQuote(this.output)}`);
  }

  tmux(...args: string[]): string {
    return execFileSync("tmux", ["-L", this.socket, "-f", "/dev/null", ...args], { encoding: "utf8" });
  }

  screen(): string {
    return this.tmux("capture-pane", "-p", "-t", this.name);
  }

  /** Keys as tmux names them (`Enter`, `Escape`, `C-d`) or literal text with `literal`. */
  keys(keys: string[], literal = false): void {
    this.tmux("send-keys", "-t", this.name, ...(literal ? ["-l"] : []), ...keys);
  }

  type(text: string): void {
    this.keys([text], true);
  }

  resize(cols: number, rows: number): void {
    this.tmux("resize-window", "-t", this.name, "-x", String(cols), "-y", String(rows));
  }

  /**
   * The screen once it shows `pattern`. A capture-pane is a tmux client process (~25 ms of CPU with
   * the spawn): the screen is read again only after the pane printed more (its output file grew,
   * looked at every 100 ms, a stat), at most every 200 ms while it keeps printing (a streamed answer
   * redraws every few ms; reading it every 100 ms cost a file seconds of CPU for no earlier match
   * worth having), or after a second without output, for a change tmux makes on its own. The size
   * is taken before each capture, so output during one is never missed: a later capture shows it.
   */
  async waitFor(pattern: string | RegExp, timeoutMs = 10_000): Promise<string> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const printed = this.printed();
      const captured = Date.now();
      const screen = this.screen();
      if (typeof pattern === "string" ? screen.includes(pattern) : pattern.test(screen)) return screen;
      if (Date.now() > end) throw new Error(`tmux screen never showed ${String(pattern)}:\n${screen}`);
      const quiet = Math.min(captured + 1000, end + 1);
      do await new Promise((r) => setTimeout(r, 100));
      while ((this.printed() === printed || Date.now() - captured < 200) && Date.now() < quiet);
    }
  }

  /** Bytes the pane printed so far. */
  private printed(): number {
    try {
      return statSync(this.output).size;
    } catch {
      return -1;
    }
  }

  kill(): void {
    try {
      this.tmux("kill-server");
    } catch {
      // already gone
    }
    removeTempDir(this.dir);
  }
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
