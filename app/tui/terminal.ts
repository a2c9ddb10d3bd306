import { spawn } from "node:child_process";
import { readFileSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/*
 * The terminal modes Keen turns on itself (blessed knows none of them) and
 * the promise to turn them off again, whatever way the process leaves.
 */

/** Bracketed paste (2004) and focus reports (1004: ESC [ I / ESC [ O, for notifications). */
const MODES_ON = "\x1b[?2004h\x1b[?1004h";
const MODES_OFF = "\x1b[?2004l\x1b[?1004l";
/** Mouse button and wheel reports (1000) in SGR encoding (1006); off, the terminal selects and scrolls itself. */
export const MOUSE_ON = "\x1b[?1000h\x1b[?1006h";
export const MOUSE_OFF = "\x1b[?1006l\x1b[?1000l";
/** Leave the alternate screen, show the cursor, reset colours: the last resort at process exit. */
const SANE = `${MODES_OFF}${MOUSE_OFF}\x1b[?2026l\x1b[0m\x1b[?25h\x1b[?1049l`;

/** The message for a start without a terminal (the CLI prints it and exits 2). */
export function ttyProblem(stdin: { isTTY?: boolean }, stdout: { isTTY?: boolean }): string | undefined {
  if (stdin.isTTY && stdout.isTTY) return undefined;
  const which = !stdin.isTTY && !stdout.isTTY ? "stdin and stdout are not terminals" : !stdin.isTTY ? "stdin is not a terminal" : "stdout is not a terminal";
  return `the interactive UI needs a terminal (${which}); for scripts and pipes use \`keen run\` (see \`keen run --help\`)`;
}

/** Raw mode and Keen's modes on and off; `restore` is idempotent and safe on a closed terminal. */
export class TerminalModes {
  private on = false;
  private exitHandler = () => this.emergency();

  /** `mouse`: whether Keen takes the mouse (config `tui.mouse`; Alt-M switches it). */
  constructor(private stdin: NodeJS.ReadStream, private stdout: NodeJS.WriteStream, public mouse = true) {}

  /** Takes the mouse (wheel scrolls Keen's panes) or leaves it to the terminal (native selection, tmux copy-mode). */
  setMouse(on: boolean): void {
    this.mouse = on;
    if (!this.on) return;
    try {
      this.stdout.write(on ? MOUSE_ON : MOUSE_OFF);
    } catch {
      // closed terminal
    }
  }

  enable(): void {
    if (this.on) return;
    this.on = true;
    try {
      this.stdin.setRawMode?.(true);
      this.stdin.resume();
      this.stdout.write(MODES_ON + (this.mouse ? MOUSE_ON : ""));
    } catch {
      // a terminal that went away: restore will find nothing to undo
    }
    process.on("exit", this.exitHandler);
  }

  /** Undoes raw mode and the modes (not the alternate screen: blessed's destroy does that). */
  disable(): void {
    if (!this.on) return;
    this.on = false;
    process.removeListener("exit", this.exitHandler);
    try {
      this.stdout.write(MODES_OFF + MOUSE_OFF);
    } catch {
      // closed terminal
    }
    try {
      this.stdin.setRawMode?.(false);
      this.stdin.pause();
    } catch {
      // closed terminal
    }
  }

  /** At process exit nothing asynchronous runs: write the sane state synchronously. */
  private emergency(): void {
    if (!this.on) return;
    this.on = false;
    try {
      const fd = (this.stdout as unknown as { fd?: number }).fd;
      if (typeof fd === "number") writeSync(fd, SANE);
      this.stdin.setRawMode?.(false);
    } catch {
      // nothing more can be done
    }
  }
}

/** The OSC 52 sequence that puts text on the system clipboard (works over ssh and, with set-clipboard on, in tmux). */
export function osc52(text: string): string {
  return `\x1b]52;c;${Buffer.from(text, "utf8").toString("base64")}\x07`;
}

/**
 * Runs $VISUAL / $EDITOR (default vi) on a temporary file holding `text` and
 * resolves with the edited text, or undefined when the editor failed. The
 * caller steps the screen aside first.
 */
export async function runEditor(text: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const file = join(tmpdir(), `keen-prompt-${process.pid}-${Date.now()}.md`);
  writeFileSync(file, text, { mode: 0o600 });
  const editor = env.VISUAL || env.EDITOR || "vi";
  try {
    const code = await new Promise<number | null>((resolve) => {
      // Through the shell: $EDITOR often carries arguments ("code --wait").
      const child = spawn(`${editor} '${file}'`, { shell: true, stdio: "inherit", env });
      child.on("exit", (c) => resolve(c));
      child.on("error", () => resolve(-1));
    });
    return code === 0 ? readFileSync(file, "utf8") : undefined;
  } finally {
    try {
      unlinkSync(file);
    } catch {
      // already gone
    }
  }
}
