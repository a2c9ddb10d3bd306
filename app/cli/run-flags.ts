import { UsageError } from "./errors.js";
import { validateSessionFlags, type SessionFlags, type SessionSettings } from "./session-flags.js";

/** The longest `--timeout` a Node timer can hold (2^31-1 ms, about 24.8 days); a longer one would fire at once. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** `keen run` (and `keen stdio`) flags as commander parses them: the shared session flags plus their own. */
export interface RunFlags extends SessionFlags {
  session?: string;
  continue?: boolean;
  binaryStdin?: boolean;
  format?: string;
  headless?: boolean;
  streamDeltas?: boolean;
  cwd?: string;
  timeout?: string;
  stdin: boolean;
  outputSchema?: string;
}

/** Flags after validation. */
export interface RunSettings extends SessionSettings {
  session?: string;
  /** `--continue`: the most recent session of the working directory. */
  continueLast: boolean;
  /** `--binary-stdin`: send stdin that is not text. */
  binaryStdin: boolean;
  output: "text" | "json" | "jsonl";
  deltas: boolean;
  cwd?: string;
  timeoutMs?: number;
  stdin: boolean;
  outputSchema?: string;
}

/** Validates flag combinations; throws UsageError (exit 2) with one clear line. */
export function validateRunFlags(flags: RunFlags, formatGiven: boolean): RunSettings {
  if (flags.continue && flags.session) throw new UsageError("--continue and --session both choose a session: give one");
  if (flags.streamDeltas && !flags.headless) throw new UsageError("--stream-deltas needs --headless");
  if (flags.headless && formatGiven) throw new UsageError("--headless writes JSON lines; it cannot be combined with --format");
  const format = flags.format ?? "text";
  if (format !== "text" && format !== "json") throw new UsageError(`--format must be text or json, not "${format}"`);
  let timeoutMs: number | undefined;
  if (flags.timeout !== undefined) {
    const seconds = Number(flags.timeout);
    if (!Number.isFinite(seconds) || seconds <= 0) throw new UsageError(`--timeout must be a positive number of seconds, not "${flags.timeout}"`);
    timeoutMs = Math.round(seconds * 1000);
    if (timeoutMs > MAX_TIMEOUT_MS) {
      throw new UsageError(`--timeout must be at most ${Math.floor(MAX_TIMEOUT_MS / 1000)} seconds (about 24 days), not "${flags.timeout}"`);
    }
    // A timer of 0 ms would end the run before it starts.
    timeoutMs = Math.max(1, timeoutMs);
  }
  return {
    ...validateSessionFlags(flags),
    session: flags.session,
    continueLast: Boolean(flags.continue),
    binaryStdin: Boolean(flags.binaryStdin),
    output: flags.headless ? "jsonl" : (format as "text" | "json"),
    deltas: Boolean(flags.streamDeltas),
    cwd: flags.cwd,
    timeoutMs,
    stdin: flags.stdin,
    outputSchema: flags.outputSchema,
  };
}

/**
 * True when an allow or deny entry names `tool`: the exact name, or a
 * pattern ending in `*` that its start matches (`mcp__github__*`).
 */
export function matchesTool(entry: string, tool: string): boolean {
  return entry.endsWith("*") ? tool.startsWith(entry.slice(0, -1)) : entry === tool;
}

/** The allow and deny lists as a test on a name; MCP tools that appear later are held to it too. */
export function toolFilter(allowed?: string[], disallowed?: string[]): (name: string) => boolean {
  return (name) => (!allowed || allowed.some((e) => matchesTool(e, name))) && !disallowed?.some((e) => matchesTool(e, name));
}

/**
 * Entries of the lists that name no tool in `all`. `mcp__` names and patterns
 * are `mcpUnknown`: MCP servers come and go, so those are warnings, not errors.
 */
export function checkToolNames(all: string[], allowed?: string[], disallowed?: string[]): { unknown: string[]; mcpUnknown: string[] } {
  const unknown: string[] = [];
  const mcpUnknown: string[] = [];
  for (const entry of new Set([...(allowed ?? []), ...(disallowed ?? [])])) {
    if (all.some((name) => matchesTool(entry, name))) continue;
    (entry.startsWith("mcp__") ? mcpUnknown : unknown).push(entry);
  }
  return { unknown, mcpUnknown };
}
