import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/*
 * Prompt history, one file per workspace: JSON lines, newest last. Failures
 * to read or write it are never worth interrupting the user for.
 */

const KEEP = 500;

/** Where the history of a workspace lives under Keen's data directory. */
export function historyPathFor(dataDir: string, cwd: string): string {
  return join(dataDir, "history", `${createHash("sha256").update(cwd).digest("hex").slice(0, 16)}.jsonl`);
}

/** The stored prompts, oldest first (at most the last 500). */
export function loadHistory(file: string | undefined): string[] {
  if (!file) return [];
  try {
    const lines = readFileSync(file, "utf8").split("\n").filter(Boolean);
    const prompts: string[] = [];
    for (const line of lines.slice(-KEEP)) {
      try {
        const value = JSON.parse(line) as unknown;
        if (typeof value === "string") prompts.push(value);
      } catch {
        // a torn last line from a crash: skip it
      }
    }
    if (lines.length > KEEP * 2) writeFileSync(file, prompts.map((p) => JSON.stringify(p)).join("\n") + "\n");
    return prompts;
  } catch {
    return [];
  }
}

/** Appends one prompt. */
export function appendHistory(file: string | undefined, prompt: string): void {
  if (!file) return;
  try {
    mkdirSync(dirname(file), { recursive: true });
    appendFileSync(file, JSON.stringify(prompt) + "\n", { mode: 0o600 });
  } catch {
    // history is a convenience
  }
}
