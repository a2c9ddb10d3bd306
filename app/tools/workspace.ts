import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";

/**
 * The git root above `cwd` (the nearest directory holding a `.git` directory, or a
 * `.git` file as in worktrees and submodules), else `cwd` itself. Sync and cheap:
 * it only stats, never spawns git.
 */
export function findWorkspace(cwd: string): string {
  const start = resolve(cwd);
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(resolve(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return start;
  }
}
