/** Outcome of a guard check: the resolved real path, or a refusal written for the model. */
export type GuardDecision = { ok: true; path: string } | { ok: false; reason: string };

/**
 * The filesystem guard on the file tools. Auto-approve does not bypass it.
 * It does not cover what a bash command does.
 */
export interface FileGuard {
  checkRead(path: string): GuardDecision;
  checkWrite(path: string): GuardDecision;
  /**
   * For a file with more than one hard link, opened at `path` (its device and inode from a
   * `{ bigint: true }` stat): refused when another link is a protected file.
   */
  checkHardLink(path: string, id: { dev: bigint; ino: bigint }): GuardDecision;
  /** True when a path (absolute) is gitignored in the workspace; list/glob/grep skip it. */
  isIgnored(path: string): boolean;
}
