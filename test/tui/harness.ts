import { PassThrough, Writable } from "node:stream";
import xterm from "@xterm/headless";
import { startTui, type StartTuiOptions } from "../../app/tui/start.js";
import { FakeEngine } from "../fakes/fake-engine.js";

/**
 * A whole TUI on a fake terminal: blessed draws into a TTY-looking stream
 * that feeds @xterm/headless, keys are bytes written to a TTY-looking input,
 * and the test reads the screen back as text (STACK.md).
 */
export class TuiHarness {
  readonly engine = new FakeEngine();
  readonly term: InstanceType<typeof xterm.Terminal>;
  readonly stdin: PassThrough & { isTTY: boolean; setRawMode: (on: boolean) => void; rawMode: boolean };
  readonly stdout: Writable & { isTTY: boolean; columns: number; rows: number };
  readonly written: string[] = [];
  result?: Promise<string | undefined>;
  private pending: Promise<void> = Promise.resolve();

  constructor(cols: number, rows: number) {
    this.term = new xterm.Terminal({ cols, rows, allowProposedApi: true });
    const stdin = new PassThrough() as TuiHarness["stdin"];
    stdin.isTTY = true;
    stdin.rawMode = false;
    stdin.setRawMode = (on: boolean) => {
      stdin.rawMode = on;
    };
    this.stdin = stdin;
    const term = this.term;
    const written = this.written;
    const stdout = new Writable({
      write: (chunk, _enc, cb) => {
        const text = chunk.toString();
        written.push(text);
        this.pending = this.pending.then(() => new Promise<void>((r) => term.write(text, r)));
        cb();
      },
    }) as TuiHarness["stdout"];
    Object.assign(stdout, { isTTY: true, columns: cols, rows });
    this.stdout = stdout;
  }

  start(options: Partial<StartTuiOptions> = {}): this {
    this.result = startTui({
      client: this.engine, stdin: this.stdin as never, stdout: this.stdout as never, env: { TERM: "xterm-256color" }, handleSignals: false,
      initial: { cwd: "/work/proj", model: "anthropic/claude-test", permissionMode: "ask" }, ...options,
    });
    return this;
  }

  /** Waits for the terminal to take in everything written so far. */
  async settle(ms = 60): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    await this.pending;
  }

  /** The screen as text, one string per row, trailing spaces trimmed. */
  screen(): string[] {
    const buf = this.term.buffer.active;
    const rows: string[] = [];
    for (let i = 0; i < this.term.rows; i++) rows.push(buf.getLine(buf.viewportY + i)?.translateToString(true) ?? "");
    return rows;
  }

  text(): string {
    return this.screen().join("\n");
  }

  /** Polls the screen until `pattern` shows (or throws with the screen). */
  async waitFor(pattern: string | RegExp, timeoutMs = 3000): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      await this.settle(20);
      const text = this.text();
      if (typeof pattern === "string" ? text.includes(pattern) : pattern.test(text)) return;
      if (Date.now() > end) throw new Error(`screen never showed ${String(pattern)}:\n${text}`);
    }
  }

  async keys(bytes: string): Promise<void> {
    this.stdin.write(bytes);
    await this.settle(50);
  }

  async resize(cols: number, rows: number): Promise<void> {
    this.term.resize(cols, rows);
    Object.assign(this.stdout, { columns: cols, rows });
    this.stdout.emit("resize");
    await this.settle(120);
  }
}
