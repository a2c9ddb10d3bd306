/** Outcome of a guard check: the resolved real path, or a refusal written for the model. */
export type GuardDecision = { ok: true; path: string } | { ok: false; reason: string };

/**
 * The filesystem guard on the file tools. Auto-approve does not bypass it.
 * It does not cover what a bash command does.
 */
export interface FileGuard {
  checkRead(path: string): GuardDecision;
  checkWrite(path: string): GuardDecision;
  /** True when a path (absolute) is gitignored in the workspace; list/glob/grep skip it. */
  isIgnored(path: string): boolean;
}
