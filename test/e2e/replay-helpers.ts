import { rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { makeSandbox } from "./harness.js";

/** A URL where nothing listens: a replay pointed at it proves it never uses the network. */
export async function deadURL(): Promise<string> {
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  return `http://127.0.0.1:${port}`;
}

const roots: string[] = [];

/** makeSandbox, removed by removeSandboxes() (call it from the test file's `after`). */
export function sandbox(...args: Parameters<typeof makeSandbox>) {
  const sb = makeSandbox(...args);
  roots.push(sb.root);
  return sb;
}

/** Removes every sandbox this test process made. */
export function removeSandboxes(): void {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
}

/** A sandbox for replays: base URLs at a dead port and no provider key at all. */
export async function replaySandbox(files: Record<string, string> = {}) {
  const sb = sandbox(await deadURL());
  sb.env.ANTHROPIC_API_KEY = undefined;
  sb.env.OPENAI_API_KEY = undefined;
  for (const [name, content] of Object.entries(files)) writeFileSync(join(sb.workspace, name), content);
  return sb;
}

// Fields that differ between two runs of the same conversation: ids, clocks, the workspace's path, backoff jitter.
const VOLATILE = new Set(["conversation_id", "ts", "session_id", "opencode_session_id", "duration_ms", "delay_ms"]);

/**
 * A JSONL stream with what legitimately differs between a live run and its
 * replay taken out: ids, timestamps, durations, the workspace path (each run
 * has its own) and `tool-update` lines (their number depends on wall-clock
 * rate limiting). Everything else must be equal.
 */
export function comparable(lines: Record<string, any>[], workspace: string): unknown[] {
  const kept = lines.filter((l) => l.kind !== "tool-update");
  return kept.map((line, i) =>
    JSON.parse(JSON.stringify({ ...line, seq: i }).replaceAll(workspace, "<ws>"), (key, value) => (VOLATILE.has(key) ? undefined : value)),
  );
}
