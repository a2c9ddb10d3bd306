import { removeCreated, type AbsentPath } from "./protected-paths.js";

/*
 * The protected paths a sandboxed command may not create (settings other programs run code from):
 * what was absent before it ran is checked after it, and removed if it appeared.
 */

/** A command's absent protected paths, to remove once it has ended. */
export interface Audit {
  workspace: string;
  absent: AbsentPath[];
}

// Audits of commands still running: a Keen that exits at once (a second Ctrl-C) runs them on its way out.
const pending = new Set<Audit>();
let exitAuditInstalled = false;

/** Notes a command's audit, to run when it ends (`runAudit`) or, at the latest, when Keen's process exits. */
export function registerAudit(audit: Audit): void {
  if (!exitAuditInstalled) {
    exitAuditInstalled = true;
    process.on("exit", () => {
      for (const audit of [...pending]) runAudit(audit);
    });
  }
  pending.add(audit);
}

/** Removes the protected paths the command created; a line for the model about them, or "". Once per audit. */
export function runAudit(audit: Audit): string {
  if (!pending.delete(audit)) return "";
  const removed = removeCreated(audit.workspace, audit.absent);
  if (!removed.length) return "";
  return `<sandbox_removed>${removed.join(", ")}: sandboxed commands may not create ${removed.length === 1 ? "this" : "these"} (settings that other programs run code from, outside the sandbox), so Keen removed ${removed.length === 1 ? "it" : "them"} after the command; write such files with the file tools, which ask first</sandbox_removed>`;
}
