import {
  closeSync, constants, fstatSync, ftruncateSync, lstatSync, mkdirSync, openSync, readFileSync, readlinkSync, readSync, statSync,
  unlinkSync, writeSync, type Stats,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import type { FileGuard, GuardDecision } from "./guard.js";

const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;

/** `read` for read_file; `write` for write_file and edit_file; `preview` checks as `write` but only reads. */
export type OpenMode = "read" | "write" | "preview";

/** A file opened and checked. The caller owns `fd` and closes it. */
export interface GuardedFile {
  ok: true;
  fd: number;
  /** The real path the guard approved, twice: before and after opening. */
  path: string;
  stat: Stats;
  /** True when this call created the file (write mode with `create`). */
  created: boolean;
}

/** Why nothing was opened. Tools word their own message for `missing` and `directory`; `reason` fits the rest. */
export interface OpenFailure {
  ok: false;
  kind: "refused" | "missing" | "directory" | "not-file" | "not-directory" | "error";
  path: string;
  reason: string;
}

type Dir = { ok: true; fd: number; path: string };

// Linux shows the real path of every open descriptor under /proc/self/fd, and opening
// `/proc/self/fd/<dir fd>/<name>` looks `name` up in that very directory, whatever its path
// now leads to: the nearest Node 20 gets to openat(2). Elsewhere: path + device/inode checks.
const PROC_FD = "/proc/self/fd";
let procWorks: boolean | undefined = process.platform === "linux" ? undefined : false;

/** Tests turn the /proc/self/fd path off to run the portable (device and inode) checks on Linux too. */
export function useProcFd(on: boolean): void {
  procWorks = on && process.platform === "linux" ? undefined : false;
}

function realPathOf(fd: number): string | undefined {
  if (procWorks === false) return undefined;
  try {
    const path = readlinkSync(`${PROC_FD}/${fd}`);
    procWorks = true;
    return path;
  } catch (error) {
    if (procWorks === undefined) {
      procWorks = false; // no /proc mounted (some containers): fall back for good
      return undefined;
    }
    throw error;
  }
}

/** The path that opens `name` inside the verified directory `dir`. */
function entry(dir: Dir, name: string): string {
  return procWorks ? `${PROC_FD}/${dir.fd}/${name}` : join(dir.path, name);
}

const fail = (kind: OpenFailure["kind"], path: string, reason: string): OpenFailure => ({ ok: false, kind, path, reason });
const changed = (path: string) =>
  `Refused: ${path} changed while it was being opened (a symlink or directory was swapped in); nothing was read or written.`;
const cannot = (path: string, error: unknown) =>
  fail("error", path, `Cannot open ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
const isDenied = (failure: OpenFailure) => failure.kind === "error" && / EACCES$/.test(failure.reason);

/**
 * The second check, on what was actually opened: the descriptor's real path (Linux) must be
 * the path approved before and pass the guard again; elsewhere the approved path, checked
 * again, must still be the same device and inode as the descriptor.
 */
function verify(guard: FileGuard, fd: number, expected: string, write: boolean): string | undefined {
  const check = (p: string): GuardDecision => (write ? guard.checkWrite(p) : guard.checkRead(p));
  const real = realPathOf(fd);
  if (real !== undefined) {
    if (real !== expected) return changed(expected);
    const again = check(real);
    if (!again.ok) return again.reason;
    return again.path === real ? undefined : changed(expected);
  }
  // Checked again, `expected` must still be its own real path (no symlink on the way), and
  // still name the very file that was opened.
  const again = check(expected);
  if (!again.ok) return again.reason;
  if (again.path !== expected) return changed(expected);
  const now = statSync(expected, { bigint: true, throwIfNoEntry: false });
  const opened = fstatSync(fd, { bigint: true });
  return now && now.dev === opened.dev && now.ino === opened.ino ? undefined : changed(expected);
}

/** Opens and verifies directory `path`; with `create`, makes missing ones one at a time, each checked. */
function openDir(guard: FileGuard, path: string, write: boolean, create: boolean): Dir | OpenFailure {
  let fd: number;
  try {
    fd = openSync(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" && create && dirname(path) !== path) {
      const decision = guard.checkWrite(path);
      if (!decision.ok) return fail("refused", path, decision.reason);
      if (decision.path !== path) return fail("refused", path, changed(path));
      const parent = openDir(guard, dirname(path), write, true);
      if (!parent.ok) return parent;
      try {
        mkdirSync(entry(parent, basename(path)));
      } catch (mkdirError) {
        if ((mkdirError as NodeJS.ErrnoException).code !== "EEXIST") return cannot(path, mkdirError);
      } finally {
        closeSync(parent.fd);
      }
      return openDir(guard, path, write, false);
    }
    if (code === "ENOENT") return fail("missing", path, `${path} does not exist`);
    if (code === "ENOTDIR") return fail("not-directory", path, `${path} is not a directory`);
    if (code === "ELOOP") return fail("refused", path, changed(path));
    return cannot(path, error);
  }
  let problem: OpenFailure | undefined;
  try {
    const reason = verify(guard, fd, path, write);
    if (reason) problem = fail("refused", path, reason);
  } catch (error) {
    problem = cannot(path, error);
  }
  if (problem) {
    closeSync(fd);
    return problem;
  }
  return { ok: true, fd, path };
}

/** Removes the file this call created, only if the name still leads to it. */
function removeCreated(parent: Dir, name: string, fd: number): void {
  try {
    const at = entry(parent, name);
    const mine = fstatSync(fd, { bigint: true });
    const there = lstatSync(at, { bigint: true });
    if (there.dev === mine.dev && there.ino === mine.ino) unlinkSync(at);
  } catch {
    // already gone
  }
}

/** The checks that need the open descriptor: what it is, and its hard links. */
function inspect(guard: FileGuard, fd: number, path: string, mode: OpenMode): OpenFailure | undefined {
  const problem = verify(guard, fd, path, mode !== "read");
  if (problem) return fail("refused", path, problem);
  const st = fstatSync(fd, { bigint: true });
  if (st.isDirectory()) return fail("directory", path, `${path} is a directory`);
  // A FIFO or device could block or never end; O_NONBLOCK kept the open itself from waiting.
  if (!st.isFile()) return fail("not-file", path, `${path} is not a regular file`);
  if (st.nlink > 1n) {
    if (mode !== "read") {
      return fail("refused", path,
        `Refused: ${path} has ${st.nlink} hard links; writing it would change the same file under its other names too (perhaps outside the workspace), so Keen's file tools do not write files with more than one link. Break the link first (cp it to a new name and mv that over it).`);
    }
    const links = guard.checkHardLink(path, st);
    if (!links.ok) return fail("refused", path, links.reason);
  }
  return undefined;
}

/**
 * Opens a file for a file tool so that the guard's decision holds for what is opened: the
 * path is checked, its directory opened and verified, the file opened inside it without
 * following a symlink (O_NOFOLLOW; O_CREAT|O_EXCL when `create` and it is missing), and the
 * descriptor checked again (see `verify`). Contract: never throws for a missing, refused or
 * swapped file; nothing is read or written before both checks pass; a file this call created
 * is removed when the second check fails. `preview` never creates anything.
 */
export function openGuarded(guard: FileGuard, requested: string, mode: OpenMode, opts: { create?: boolean } = {}): GuardedFile | OpenFailure {
  const decision = mode === "read" ? guard.checkRead(requested) : guard.checkWrite(requested);
  if (!decision.ok) return fail("refused", requested, decision.reason);
  const path = decision.path;
  if (dirname(path) === path) return fail("directory", path, `${path} is a directory`);
  const create = mode === "write" && opts.create === true;
  let parent = openDir(guard, dirname(path), mode !== "read", create);
  // A directory one may pass through but not list (mode 711): reading still works by path,
  // and the check on the opened descriptor still stands between the file and the model.
  if (!parent.ok && mode !== "write" && isDenied(parent)) parent = { ok: true, fd: -1, path: dirname(path) };
  if (!parent.ok) {
    if (parent.kind === "missing") return fail("missing", path, `${path} does not exist`);
    return parent.kind === "not-directory" ? fail("error", path, `Cannot open ${path}: ${parent.reason}`) : parent;
  }
  const name = basename(path);
  const at = parent.fd === -1 ? path : entry(parent, name);
  const flags = (mode === "write" ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK;
  try {
    let fd: number;
    let created = false;
    try {
      fd = openSync(at, flags);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EISDIR") return fail("directory", path, `${path} is a directory`);
      if (code === "ELOOP") return fail("refused", path, changed(path));
      if (code !== "ENOENT") return cannot(path, error);
      if (!create) return fail("missing", path, `${path} does not exist`);
      try {
        fd = openSync(at, flags | O_CREAT | O_EXCL, 0o666);
        created = true;
      } catch (createError) {
        if ((createError as NodeJS.ErrnoException).code === "EEXIST") return fail("refused", path, changed(path));
        return cannot(path, createError);
      }
    }
    let problem: OpenFailure | undefined;
    try {
      problem = inspect(guard, fd, path, mode);
    } catch (error) {
      problem = cannot(path, error);
    }
    if (problem) {
      if (created) removeCreated(parent, name, fd);
      closeSync(fd);
      return problem;
    }
    return { ok: true, fd, path, stat: fstatSync(fd), created };
  } finally {
    if (parent.fd !== -1) closeSync(parent.fd);
  }
}

/** A directory opened and checked; `listPath` reads exactly it (its /proc/self/fd entry on Linux). */
export interface GuardedDir {
  ok: true;
  fd: number;
  path: string;
  listPath: string;
}

/** Opens a directory for listing, checked before and after opening like openGuarded. The caller closes `fd`. */
export function openGuardedDir(guard: FileGuard, requested: string): GuardedDir | OpenFailure {
  const decision = guard.checkRead(requested);
  if (!decision.ok) return fail("refused", requested, decision.reason);
  const dir = openDir(guard, decision.path, false, false);
  if (!dir.ok) return dir;
  return { ok: true, fd: dir.fd, path: dir.path, listPath: procWorks ? `${PROC_FD}/${dir.fd}` : dir.path };
}

/**
 * The content of an opened file, at most `max` bytes (a file that grows while it is read
 * cannot run past the limit the caller checked against its size).
 */
export function readAll(fd: number, max = Infinity): Buffer {
  if (max === Infinity) return readFileSync(fd);
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < max) {
    const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, max - total));
    const n = readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) break;
    chunks.push(chunk.subarray(0, n));
    total += n;
  }
  return Buffer.concat(chunks, total);
}

/** A whole file read through openGuarded (for tools that only read: grep can use it too). */
export function readGuarded(guard: FileGuard, requested: string, max?: number): { ok: true; path: string; data: Buffer } | OpenFailure {
  const file = openGuarded(guard, requested, "read");
  if (!file.ok) return file;
  try {
    return { ok: true, path: file.path, data: readAll(file.fd, max) };
  } finally {
    closeSync(file.fd);
  }
}

/** Replaces the whole content of a file opened for writing. */
export function replaceContent(fd: number, data: Buffer): void {
  for (let at = 0; at < data.length; ) at += writeSync(fd, data, at, data.length - at, at);
  ftruncateSync(fd, data.length);
}
