import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PREFIX = "keen-sandbox-";
let root: string | undefined;

/**
 * One directory under the system temp dir for everything this process's sandbox makes:
 * its sessions' temporary directories and the sandbox library's own sockets and files
 * (the library puts them in `os.tmpdir()`, so TMPDIR points here from now on). It goes
 * when Keen exits; one left by a Keen that was killed (SIGKILL, a crash) is removed by the
 * next Keen that sandboxes, once its process is gone, with the library's bridge processes
 * (socat listening on sockets in there) that outlived it. The name carries the pid for that.
 */
export function sandboxTempRoot(): string {
  if (root) return root;
  const base = tmpdir();
  removeStale(base);
  const made = mkdtempSync(join(base, `${PREFIX}${process.pid}-`));
  root = made;
  process.env.TMPDIR = made;
  process.on("exit", () => {
    // The library's bridges (socat on sockets in here) are children it does not end when
    // Keen exits at once (a second Ctrl-C, process.exit): they would outlive Keen.
    killUsers(made);
    rmSync(made, { recursive: true, force: true });
  });
  return made;
}

function removeStale(base: string): void {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(new RegExp(`^${PREFIX}(\\d+)-`).exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    const path = join(base, name);
    try {
      // Only our own directories: another user's are not ours to judge.
      const stat = lstatSync(path);
      if (!stat.isDirectory() || stat.uid !== process.getuid?.()) continue;
      killUsers(path);
      rmSync(path, { recursive: true, force: true });
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Linux: SIGKILLs our processes whose command line names something inside `dir` (never this process). */
export function killUsers(dir: string): void {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      if (Number(pid) === process.pid || !readFileSync(`/proc/${pid}/cmdline`, "latin1").includes(`${dir}/`)) continue;
      if (lstatSync(`/proc/${pid}`).uid === process.getuid?.()) process.kill(Number(pid), "SIGKILL");
    } catch {
      // gone, or not ours
    }
  }
}
