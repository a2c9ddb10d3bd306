import { lstatSync, readdirSync, rmdirSync, rmSync, type Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";

// The names the sandbox library write-protects in and below its working directory: its
// DANGEROUS_FILES and getDangerousDirectories() (test/sandbox/protected-paths.test.ts keeps
// these equal to the library's). Files other programs run code from, outside any sandbox.
export const PROTECTED_FILES = [".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".ripgreprc", ".mcp.json"];
export const PROTECTED_DIRS = [".vscode", ".idea", ".claude/commands", ".claude/agents"];
/** How deep below the workspace nested ones are looked for: the library's default. */
const SEARCH_DEPTH = 3;

/** The workspace's write-protected paths, split by whether they are there when a command starts. */
export interface ProtectedPaths {
  /** Made read-only inside the sandbox (bind mounts of what is there leave nothing on the host). */
  existing: string[];
  /** Not there: a command may create one, and the audit after it removes it. */
  absent: AbsentPath[];
}

/** A protected path that is not there, and its first component that is not there either. */
export interface AbsentPath {
  path: string;
  top: string;
}

/**
 * The paths of `workspace` a sandboxed command may not write, as the library would compute
 * them for its working directory: the protected names at the top, the repository's hooks
 * and config, and the same names (and nested repositories' hooks and config) down to
 * three levels. `extra` (Keen's `.keen`) joins them. `list` lists a directory (runtime.ts
 * passes secret-paths.ts's createDirectoryListings, which lists again only what changed).
 */
export async function protectedPaths(workspace: string, extra: string[] = [], list?: (dir: string) => Dirent[]): Promise<ProtectedPaths> {
  const paths = new Set([...PROTECTED_FILES, ...PROTECTED_DIRS].map((name) => join(workspace, name)));
  for (const path of extra) paths.add(path);
  const dotGit = join(workspace, ".git");
  const kind = kindOf(dotGit);
  // A worktree's `.git` file is kept a file; an absent `.git` is left for `git init` to make.
  if (kind === "file") paths.add(dotGit);
  if (kind === "dir") {
    paths.add(join(dotGit, "hooks"));
    paths.add(join(dotGit, "config"));
  }
  for (const found of nestedMatches(workspace, await listMatches(workspace, list))) paths.add(found);
  const existing: string[] = [];
  const absent: AbsentPath[] = [];
  for (const path of paths) {
    if (kindOf(path)) existing.push(path);
    else absent.push({ path, top: firstMissing(workspace, path) });
  }
  return { existing, absent };
}

function kindOf(path: string): "file" | "dir" | undefined {
  try {
    return lstatSync(path).isDirectory() ? "dir" : "file";
  } catch {
    return undefined;
  }
}

function firstMissing(workspace: string, path: string): string {
  let top = path;
  for (let dir = dirname(path); dir !== workspace && dir.startsWith(workspace + sep) && !kindOf(dir); dir = dirname(dir)) top = dir;
  return top;
}

/**
 * The files below `workspace` that the library's ripgrep scan lists (its globs, case
 * folded; files up to one level below the search depth; not in node_modules, not through
 * symlinks), walked here: a spawn costs more than the walk of a usual tree. Inside a
 * `.git` only what can match is looked at.
 */
async function listMatches(workspace: string, list?: (dir: string) => Dirent[]): Promise<string[]> {
  const files = new Set(PROTECTED_FILES.map((name) => name.toLowerCase()));
  const dirs = PROTECTED_DIRS.map((name) => name.toLowerCase().split("/"));
  const found: string[] = [];
  const matches = (parts: string[]) => {
    const lower = parts.map((part) => part.toLowerCase());
    const name = lower[lower.length - 1]!;
    if (files.has(name)) return true;
    const dirParts = lower.slice(0, -1);
    if (dirs.some((dir) => dirParts.some((_, i) => dir.every((part, k) => dirParts[i + k] === part)))) return true;
    const git = lower.lastIndexOf(".git");
    return git >= 0 && (lower[git + 1] === "hooks" ? git + 2 < lower.length : git + 2 === lower.length && (name === "head" || name === "config"));
  };
  const walk = async (parts: string[]): Promise<void> => {
    let entries: Dirent[];
    try {
      const dir = join(workspace, ...parts);
      entries = list ? list(dir) : await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    const key = parts.join(sep);
    let step = steps.get(entries);
    if (step?.key !== key) steps.set(entries, (step = { key, ...classify(parts, entries, matches) }));
    found.push(...step.found);
    await Promise.all(step.below.map(walk));
  };
  await walk([]);
  return found;
}

/**
 * What one directory's entries give the walk: its matching files and the directories to walk
 * into. Kept by the listing (createDirectoryListings hands back the same array while a directory
 * is unchanged), so a command in a large tree does not match its ~10,000 unchanged names again.
 */
const steps = new WeakMap<Dirent[], { key: string; found: string[]; below: string[][] }>();

function classify(parts: string[], entries: Dirent[], matches: (parts: string[]) => boolean): { found: string[]; below: string[][] } {
  const inGit = parts.length > 0 && parts[parts.length - 1]!.toLowerCase() === ".git";
  const found: string[] = [];
  const below: string[][] = [];
  for (const entry of entries) {
    const path = [...parts, entry.name];
    if (entry.isDirectory()) {
      if (entry.name === "node_modules" || path.length > SEARCH_DEPTH || (inGit && entry.name.toLowerCase() !== "hooks")) continue;
      below.push(path);
    } else if (entry.isFile() && matches(path)) {
      found.push(path.join(sep));
    }
  }
  return { found, below };
}

/** The library's reading of a match: the protected directory that holds it, else the file; a repository's HEAD stands for its hooks. */
function nestedMatches(workspace: string, matches: string[]): string[] {
  const directoryNames = [...PROTECTED_DIRS, ".git/hooks", ".git/config", ".git/HEAD"].map((name) => name.toLowerCase().split("/"));
  const found: string[] = [];
  for (const match of matches) {
    const segments = relative(workspace, resolve(workspace, match)).split(sep);
    const lower = segments.map((s) => s.toLowerCase());
    let at = segments.length - 1;
    let length = 1;
    let deepest = SEARCH_DEPTH - 1;
    search: for (let i = 0; i < lower.length; i++) {
      for (const name of directoryNames) {
        if (name.every((part, k) => lower[i + k] === part)) {
          at = i;
          length = name.length;
          deepest = SEARCH_DEPTH - 2;
          break search;
        }
      }
    }
    if (at > deepest) continue;
    const parts = segments.slice(0, at + length);
    if (lower[at] === ".git" && lower[at + 1] === "head") parts[at + 1] = "hooks";
    found.push(join(workspace, ...parts));
  }
  return found;
}

/**
 * After a command: removes each absent path that is there now (the command made it), with
 * the directories it made on the way there when they hold nothing else. Returns what was
 * removed, relative to `workspace`. Contract: never throws.
 */
export function removeCreated(workspace: string, absent: AbsentPath[]): string[] {
  const removed: string[] = [];
  for (const { path, top } of absent) {
    if (!kindOf(path)) continue;
    try {
      rmSync(path, { recursive: true, force: true });
      removed.push(relative(workspace, path));
    } catch {
      continue;
    }
    // `.claude/commands` made `.claude` too: every directory from it down to `top` was not there before.
    for (let dir = dirname(path); path !== top && (dir === top || dir.startsWith(top + sep)); dir = dirname(dir)) {
      try {
        if (readdirSync(dir).length > 0) break;
        rmdirSync(dir);
      } catch {
        break;
      }
    }
  }
  return removed;
}
