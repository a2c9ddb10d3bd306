import { afterEach } from "node:test";
import { PassThrough, Writable } from "node:stream";
import xterm from "@xterm/headless";
import { ESC_WAIT_MS } from "../../app/tui/keys.js";
import { startTui, type StartTuiOptions } from "../../app/tui/start.js";
import { FakeEngine } from "../fakes/fake-engine.js";

/** Generous: a frame is due within milliseconds, but the cores are shared with other test runs. */
const WAIT_MS = 20_000;
const live = new Set<TuiHarness>();
/** The TUIs started by the current test. */
const started = new Set<TuiHarness>();

// A failed assertion leaves its TUI running (stdin open, a ticker): that would hold the test
// process open for ever. Ending stdin makes the TUI leave as on a hang-up.
// And a TUI that caught a failure of its own drawing or of a response handler says "display error" and
// goes on: a test whose screen never looks there would pass with it, so any such line fails the test. It
// is often a fake answer without the data the real engine sends (FakeEngine's DEFAULT_ANSWERS).
afterEach(async () => {
  for (const h of live) await h.stop();
  const shown = [...started].map((h) => h.displayError()).find(Boolean);
  started.clear();
  if (shown) throw new Error(`the TUI showed a display error: ${shown}`);
});

/**
 * A whole TUI on a fake terminal: blessed draws into a TTY-looking stream
 * that feeds @xterm/headless, keys are bytes written to a TTY-looking input,
 * and the test reads the screen back as text (STACK.md).
 *
 * Waits are on events, not on time: the TUI reports each frame it draws
 * (onFrame), and the harness then waits until xterm has taken in what was
 * written. So a loaded machine makes the tests slower, never wrong.
 */
export class TuiHarness {
  readonly engine = new FakeEngine();
  readonly term: InstanceType<typeof xterm.Terminal>;
  readonly stdin: PassThrough & { isTTY: boolean; setRawMode: (on: boolean) => void; rawMode: boolean };
  readonly stdout: Writable & { isTTY: boolean; columns: number; rows: number };
  readonly written: string[] = [];
  result?: Promise<string | undefined>;
  private pending: Promise<void> = Promise.resolve();
  private ended = false;
  private frameWaiters: (() => void)[] = [];
  /** Frames drawn so far: keys() waits for one after its bytes, also when it was drawn before the wait began. */
  private frames = 0;
  private outputWaiters: (() => void)[] = [];

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
        this.pending = this.pending.then(() => new Promise<void>((r) => term.write(text, r))).then(() => {
          for (const wake of this.outputWaiters.splice(0)) wake();
        });
        cb();
      },
    }) as TuiHarness["stdout"];
    Object.assign(stdout, { isTTY: true, columns: cols, rows });
    this.stdout = stdout;
  }

  start(options: Partial<StartTuiOptions> = {}): this {
    live.add(this);
    started.add(this);
    this.result = startTui({
      client: this.engine, stdin: this.stdin as never, stdout: this.stdout as never, env: { TERM: "xterm-256color" }, handleSignals: false,
      initial: { cwd: "/work/proj", model: "anthropic/claude-test", permissionMode: "ask" }, ...options,
      onFrame: (ms) => {
        options.onFrame?.(ms);
        this.frames++;
        for (const wake of this.frameWaiters.splice(0)) wake();
      },
    });
    void this.result.finally(() => {
      this.ended = true;
      live.delete(this);
    }).catch(() => {});
    return this;
  }

  /** Ends the TUI if a test left it running (a failed assertion). */
  async stop(): Promise<void> {
    live.delete(this);
    this.stdin.end();
    await Promise.race([this.result?.catch(() => undefined), new Promise((r) => setTimeout(r, WAIT_MS).unref())]);
  }

  /**
   * Waits `ms`, then until xterm has taken in everything written so far. For a test that checks
   * nothing more was written (a wait for something cannot tell when to stop); to see something
   * appear, waitFor is the load-proof way.
   */
  async settle(ms = 60): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    await this.flush();
  }

  /** Waits until xterm has taken in everything written so far (blessed writes a frame on a later tick). */
  private async flush(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    let seen: Promise<void>;
    do {
      seen = this.pending;
      await seen;
    } while (seen !== this.pending);
  }

  /**
   * Resolves at the next frame the TUI draws (or, with `anyOutput`, once xterm has taken in more
   * output: blessed also renders outside frames, e.g. to move a label), or when the TUI has ended;
   * "never" fails the test.
   */
  private async nextFrame(deadline: number, what: () => string, anyOutput = false): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const frame = new Promise<void>((r) => (anyOutput ? this.outputWaiters : this.frameWaiters).push(r));
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(what())), Math.max(0, deadline - Date.now()));
    });
    try {
      await Promise.race([frame, this.result?.then(() => undefined, () => undefined) ?? frame, late]);
    } finally {
      clearTimeout(timer);
    }
    await this.flush();
  }

  /**
   * The first "display error" the TUI wrote, with what follows it, or undefined. Read from everything written,
   * controls left out (blessed skips unchanged cells with a cursor move, so words may run together).
   */
  displayError(): string | undefined {
    const text = this.written.join("").replace(/\x1b(?:\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-Za-z]|[78=>])/g, "");
    const at = text.search(/display\s*error:/);
    return at < 0 ? undefined : text.slice(at, at + 120).replace(/\s+/g, " ");
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

  /** Waits, frame by frame, until `pattern` shows (or throws with the screen). */
  async waitFor(pattern: string | RegExp, timeoutMs = WAIT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const shows = () => (typeof pattern === "string" ? this.text().includes(pattern) : pattern.test(this.text()));
    await this.flush();
    while (!shows()) await this.nextFrame(deadline, () => `screen never showed ${String(pattern)}:\n${this.text()}`, true);
  }

  /**
   * The text inside the box titled `title` (its top border reads `┌─ title`), rows joined with nothing and every
   * space dropped: however the pane wraps a line (at a space, or inside a path longer than the pane), it reads
   * the same. Undefined while no such box is on screen.
   */
  paneText(title: string): string | undefined {
    const buf = this.term.buffer.active;
    const row = (y: number, from?: number, to?: number) => buf.getLine(buf.viewportY + y)?.translateToString(true, from, to) ?? "";
    for (let y = 0; y < this.term.rows; y++) {
      const left = row(y).indexOf(`┌─ ${title} `);
      if (left < 0) continue;
      const right = row(y).indexOf("┐", left);
      let text = "";
      for (let y2 = y + 1; y2 < this.term.rows && row(y2, left, left + 1) !== "└"; y2++) text += row(y2, left + 1, right);
      return text.replace(/\s+/g, "");
    }
    return undefined;
  }

  /** Waits, frame by frame, until `text` shows in the pane titled `title`, spaces and wrapping ignored (see paneText). */
  async waitForIn(title: string, text: string, timeoutMs = WAIT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const wanted = text.replace(/\s+/g, "");
    await this.flush();
    while (!this.paneText(title)?.includes(wanted)) {
      await this.nextFrame(deadline, () => `the ${title} pane never showed ${JSON.stringify(text)}:\n${this.text()}`, true);
    }
  }

  /** Types `bytes` that draw nothing (Ctrl-Z leaves the screen, a focus report changes no cell): no frame is awaited. */
  async press(bytes: string): Promise<void> {
    this.stdin.write(bytes);
    await new Promise((r) => process.nextTick(r));
    await this.flush();
  }

  /**
   * Types `bytes` and waits for the frame they cause (or for the TUI to end, e.g. on Ctrl-D). A
   * lone trailing Esc is held by the key decoder for ESC_WAIT_MS first: a timer set after the
   * decoder's, with a longer delay, fires after it whatever the load.
   */
  async keys(bytes: string): Promise<void> {
    const ended = this.ended || !this.result;
    const before = this.frames;
    this.stdin.write(bytes);
    if (ended) return this.flush();
    await new Promise((r) => process.nextTick(r));
    if (bytes.endsWith("\x1b")) await new Promise((r) => setTimeout(r, ESC_WAIT_MS + 1));
    // Under load the decoder's Esc timer and ours can fire in one pass, the frame drawn before we wait.
    if (this.frames > before) return this.flush();
    await this.nextFrame(Date.now() + WAIT_MS, () => `no frame after the keys ${JSON.stringify(bytes)}:\n${this.text()}`);
  }

  async resize(cols: number, rows: number): Promise<void> {
    this.term.resize(cols, rows);
    Object.assign(this.stdout, { columns: cols, rows });
    this.stdout.emit("resize");
    await this.nextFrame(Date.now() + WAIT_MS, () => `no frame after a resize to ${cols}x${rows}:\n${this.text()}`);
  }
}
