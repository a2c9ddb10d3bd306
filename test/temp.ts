import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { killUsers } from "../app/sandbox/temp-root.js";

const made = new Set<string>();

/**
 * A new directory under the system temp dir, removed when this test process
 * exits — passed, failed or timed out — so no test leaves one behind
 * (node --test runs each file in its own process). `remove` deletes it earlier.
 */
export function makeTempDir(prefix: string, parent: string = tmpdir()): string {
  if (made.size === 0) process.once("exit", removeAll);
  const dir = mkdtempSync(join(parent, prefix));
  made.add(dir);
  return dir;
}

/** Removes a directory made by makeTempDir now. */
export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  made.delete(dir);
}

function removeAll(): void {
  for (const dir of made) {
    // A test that kills Keen with SIGKILL leaves the sandbox library's bridge (socat on a socket
    // in the sandbox's TMPDIR) behind; Keen's next run would sweep it, but a test's directory has none.
    killUsers(dir);
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }
  made.clear();
}
