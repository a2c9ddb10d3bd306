import { execFile } from "node:child_process";
import { lstatSync, readdirSync, rmdirSync, rmSync } from "node:fs";
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
 * three levels, found by one ripgrep run. `extra` (Keen's `.keen`) joins them.
 */
export async function protectedPaths(workspace: string, extra: string[] = []): Promise<ProtectedPaths> {
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
  for (const found of nestedMatches(workspace, await listMatches(workspace))) paths.add(found);
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

/** ripgrep's list of protected names below `workspace`; what it listed counts however it ended. */
function listMatches(workspace: string): Promise<string[]> {
  const globs = [
    ...PROTECTED_FILES.flatMap((name) => ["--iglob", name]),
    ...PROTECTED_DIRS.flatMap((name) => ["--iglob", `**/${name}/**`]),
    "--iglob", "**/.git/hooks/**", "--iglob", "**/.git/HEAD", "--iglob", "**/.git/config",
  ];
  const args = ["--files", "--hidden", "--no-ignore", "--no-config", "--max-depth", String(SEARCH_DEPTH + 1), ...globs, "-g", "!**/node_modules/**"];
  return new Promise((done) => {
    execFile("rg", args, { cwd: workspace, timeout: 10_000, maxBuffer: 16 * 1024 * 1024 }, (_error, stdout) => {
      done(String(stdout ?? "").split("\n").filter(Boolean));
    });
  });
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
