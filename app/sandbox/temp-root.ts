import { lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PREFIX = "keen-sandbox-";
let root: string | undefined;

/**
 * One directory under the system temp dir for everything this process's sandbox makes:
 * its sessions' temporary directories and the sandbox library's own sockets and files
 * (the library puts them in `os.tmpdir()`, so TMPDIR points here from now on). It goes
 * when Keen exits; one left by a Keen that was killed (SIGKILL, a crash) is removed by the
 * next Keen that sandboxes, once its process is gone. The name carries the pid for that.
 */
export function sandboxTempRoot(): string {
  if (root) return root;
  const base = tmpdir();
  removeStale(base);
  const made = mkdtempSync(join(base, `${PREFIX}${process.pid}-`));
  root = made;
  process.env.TMPDIR = made;
  process.on("exit", () => rmSync(made, { recursive: true, force: true }));
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
      if (stat.isDirectory() && stat.uid === process.getuid?.()) rmSync(path, { recursive: true, force: true });
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
