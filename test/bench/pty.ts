/** A command in a pseudo-terminal (util-linux `script`), for the bench's TUI rows and the tests that need a terminal. */
import { spawn } from "node:child_process";
import type { ChildEnv } from "./measure.js";

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Runs a command in a pty of 120x40; resolves with ms from spawn until `until` matches the output, after sending `keys` and waiting for exit. */
export function inPty(argv: string[], env: ChildEnv, cwd: string, until: RegExp | undefined, keys = "\x04"): Promise<{ firstMs: number; wallMs: number }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, TERM: "xterm-256color" };
  for (const [k, v] of Object.entries(env)) v === undefined ? delete childEnv[k] : (childEnv[k] = v);
  const command = `stty cols 120 rows 40; exec ${argv.map(shellQuote).join(" ")}`;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn("script", ["-qfec", command, "/dev/null"], { env: childEnv, cwd, stdio: ["pipe", "pipe", "pipe"] });
    let seen = "";
    let firstMs = until ? 0 : NaN;
    const timeout = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.stdout.on("data", (chunk: Buffer) => {
      if (!until || firstMs) return;
      // blessed moves the cursor over blank cells (CSI n C) instead of writing spaces.
      seen += chunk.toString("utf8").replace(/\x1b\[(\d*)C/g, (_, n: string) => " ".repeat(Number(n || 1)));
      if (until.test(seen)) {
        firstMs = performance.now() - started;
        child.stdin.write(keys);
      }
    });
    child.on("close", (code) => {
      clearTimeout(timeout);
      const wallMs = performance.now() - started;
      if (code !== 0 || (until && !firstMs)) return reject(new Error(`${argv.join(" ")} in a pty: exit ${code}, first frame ${firstMs ? "seen" : "never seen"}`));
      resolve({ firstMs: until ? firstMs : wallMs, wallMs });
    });
  });
}

/** Spawn to first frame of `keen` (no provider needed to draw) against `node -e 0`, both in a pty. */
