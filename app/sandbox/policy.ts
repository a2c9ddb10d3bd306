import { join } from "node:path";
import { deniedLocations, sandboxDeniedSystemPaths, type FileGuardOptions } from "../permissions/file-guard.js";

/** What a session's sandboxed commands may touch. */
export interface SandboxPolicy {
  /** Writable, with the per-session temporary directory. */
  workspace: string;
  /** The per-session temporary directory (TMPDIR inside). */
  tmpDir: string;
  /** Absolute paths and globs no command may read. */
  denyRead: string[];
  /**
   * Directories below which no secret-named entry (secretNameGlobs), at any depth, may be read:
   * the workspace. Kept apart from `denyRead`: on Linux Keen finds those entries itself before
   * each command (secret-paths.ts); elsewhere they go to the library as globs.
   */
  secretRoots: string[];
  /** Paths inside the writable ones that stay read-only (the project's `.keen`, as the guard keeps it). */
  denyWrite: string[];
  /** Hosts commands may reach (`sandbox.network.allowedDomains`); every other host is asked about or denied. */
  allowedDomains: string[];
}

/**
 * The policy of a session: writes only in the workspace and `tmpDir`; reads everywhere
 * except what the file guard refuses (its credential stores, Keen's own config and data,
 * its system secrets) and secret-looking names in the workspace. Derived from the guard's
 * own lists so that a path the guard refuses is unreadable inside too.
 */
export function sandboxPolicy(opts: {
  workspace: string; tmpDir: string; allowedDomains?: string[];
  guard: Pick<FileGuardOptions, "home" | "extraDenied" | "protectedPaths" | "allowProjectConfigEdits">;
}): SandboxPolicy {
  const { credentials, extra, keenOwn } = deniedLocations(opts.guard);
  return {
    workspace: opts.workspace,
    tmpDir: opts.tmpDir,
    denyRead: [...new Set([...credentials, ...keenOwn, ...extra, ...sandboxDeniedSystemPaths()])],
    secretRoots: [opts.workspace],
    // Like the guard: the project config chooses the next run's model and tools. (On Linux one
    // that does not exist yet is not mounted: a `.keen` a command creates is removed after it.)
    denyWrite: opts.guard.allowProjectConfigEdits ? [] : [join(opts.workspace, ".keen")],
    allowedDomains: opts.allowedDomains ?? [],
  };
}
