import { readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { FileGuard } from "../permissions/guard.js";

/*
 * The workspace's paths for a front end's `@` completion (the `list-files`
 * command). What is listed is decided by the session's filesystem guard, the
 * same one read_file asks: a path the guard refuses (a secret name, a
 * credential directory, a link to either, Keen's own files) or that is
 * gitignored is never listed, so completing a path cannot put a secret
 * file's name in front of the model, and no second copy of the rules drifts.
 */

/** The walk stops after this many entries (a huge tree is still listed in part). */
export const LIST_FILES_MAX_ENTRIES = 20_000;
const MAX_DEPTH = 16;
/** A walk is reused this long: a completion asks again on every keystroke, and a new file shows up soon after. */
const WALK_TTL_MS = 5_000;

/** `list-files`' answer: matching paths relative to the session's directory (directories end in `/`), best first. */
export interface FileListing {
  paths: string[];
  /** More paths matched than `limit`, or the walk stopped at its cap before seeing the whole tree. */
  truncated: boolean;
}

/** A session's lister: `list(query, limit)` matches against one cached walk of `cwd`. */
export interface FileLister {
  list(query: string, limit: number): Promise<FileListing>;
}

/** Every path under `cwd` the guard lets the file tools read and gitignore keeps, breadth first, bounded. */
async function walk(guard: FileGuard, cwd: string): Promise<{ paths: string[]; capped: boolean }> {
  const paths: string[] = [];
  const queue: { dir: string; depth: number }[] = [{ dir: cwd, depth: 0 }];
  while (queue.length) {
    const { dir, depth } = queue.shift()!;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name === ".git") continue;
      const abs = join(dir, entry.name);
      if (guard.isIgnored(abs) || !guard.checkRead(abs).ok) continue;
      if (paths.length >= LIST_FILES_MAX_ENTRIES) return { paths, capped: true };
      const rel = relative(cwd, abs).split(sep).join("/");
      // A symlink is listed as a file: following links could walk out of the workspace or loop.
      const isDir = entry.isDirectory();
      paths.push(isDir ? `${rel}/` : rel);
      if (isDir && depth < MAX_DEPTH) queue.push({ dir: abs, depth: depth + 1 });
    }
  }
  return { paths, capped: false };
}

/** Paths matching a query: path prefix first, then file-name prefix, then substring (case-insensitive); shorter first. */
export function matchPaths(paths: string[], query: string): string[] {
  const q = query.toLowerCase();
  const scored: [number, string][] = [];
  for (const p of paths) {
    const lower = p.toLowerCase();
    const name = lower.replace(/\/$/, "").split("/").pop()!;
    const score = lower.startsWith(q) ? 0 : name.startsWith(q) ? 1 : lower.includes(q) ? 2 : -1;
    if (score >= 0) scored.push([score, p]);
  }
  scored.sort((a, b) => a[0] - b[0] || a[1].length - b[1].length || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return scored.map(([, p]) => p);
}

/**
 * A lister of `cwd` behind `guard`. It walks on the first ask; after WALK_TTL_MS an ask
 * starts a fresh walk but is answered from the last one (a big tree takes seconds to walk,
 * and a completion must not wait for it on every keystroke). Concurrent asks share a walk.
 */
export function createFileLister(guard: FileGuard, cwd: string, now: () => number = Date.now): FileLister {
  type Walk = { paths: string[]; capped: boolean };
  let last: Walk | undefined;
  let walking: Promise<Walk> | undefined;
  let startedAt = 0;
  return {
    async list(query, limit) {
      if (!walking && (!last || now() - startedAt > WALK_TTL_MS)) {
        startedAt = now();
        walking = walk(guard, cwd).then((done) => (last = done)).finally(() => (walking = undefined));
        // Answered from the last walk, nobody may await this one: its failure must not go unhandled.
        walking.catch(() => {});
      }
      const { paths, capped } = last ?? (await walking!);
      const matched = matchPaths(paths, query);
      return { paths: matched.slice(0, limit), truncated: capped || matched.length > limit };
    },
  };
}
