import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";

// Plain JS for a bare `node -e`: the flipper must start fast and run at full speed.
const FLIPPER = String.raw`
const fs = require("fs");
const [kind, path, target, content] = process.argv.slice(1);
let flips = 0;
const swapIn = (make) => { const tmp = path + ".flip-tmp"; fs.rmSync(tmp, { recursive: true, force: true }); make(tmp); fs.renameSync(tmp, path); };
// The count is reported on every way out: a loaded machine can reach the deadline before stop().
const report = () => process.stdout.write("flips " + flips + "\n", () => process.exit(0));
process.on("SIGTERM", report);
// Never outlive the test: stdin closes when the parent goes, and there is a deadline.
process.stdin.on("end", () => process.exit(0)).resume();
setTimeout(report, 600000).unref();
function step() {
  try {
    if (kind === "file") {
      swapIn((tmp) => fs.writeFileSync(tmp, content));
      swapIn((tmp) => fs.symlinkSync(target, tmp));
    } else {
      // A directory cannot be renamed over a symlink (nor the reverse): there are short gaps.
      fs.rmSync(path, { recursive: true, force: true });
      fs.mkdirSync(path);
      fs.writeFileSync(path + "/f.txt", content);
      fs.rmSync(path, { recursive: true, force: true });
      fs.symlinkSync(target, path);
    }
    flips++;
  } catch {}
  if (flips === 1) process.stdout.write("ready\n");
}
(function loop() { for (let i = 0; i < 200; i++) step(); setImmediate(loop); })();
`;

/** A child process that keeps turning `path` into a workspace file or directory and back into a symlink to `target`. */
export interface PathFlipper {
  child: ChildProcess;
  /** Stops the child and resolves with how many flips it made. */
  stop(): Promise<number>;
}

/**
 * Starts flipping and resolves once the first flip is done. `kind: "file"` swaps `path`
 * atomically (rename) between a file holding `content` and a symlink to `target`; `"dir"`
 * between a directory holding `f.txt` (with `content`) and a symlink to the directory `target`.
 */
export async function startFlipper(kind: "file" | "dir", path: string, target: string, content: string): Promise<PathFlipper> {
  const child = spawn(process.execPath, ["-e", FLIPPER, kind, path, target, content], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  child.stdout!.setEncoding("utf8").on("data", (d) => (out += d));
  while (!out.includes("ready")) {
    await Promise.race([once(child.stdout!, "data"), once(child, "exit").then(() => { throw new Error("flipper exited early"); })]);
  }
  return {
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, "exit");
        child.kill("SIGTERM");
        await exited;
      }
      return Number(/flips (\d+)/.exec(out)?.[1] ?? 0);
    },
  };
}
