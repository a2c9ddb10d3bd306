import { join, resolve } from "node:path";
import type { KeenPaths } from "./config.js";
import { DEMO_NAME } from "./demo.js";
import { UsageError } from "./errors.js";

/*
 * The cassette flags and paths every command parses, apart from the cassette
 * machinery itself (app/cli/cassette-setup.ts): a run without --record or
 * --replay never loads that, and the start-up snapshot does not carry it.
 */

/** The cassette flags of `keen run`, `keen stdio` and the TUI, as commander parses them. */
export interface CassetteFlags {
  record?: string;
  replay?: string;
  replayLoose?: boolean;
  replaySpeed?: string;
}

/** Cassette flags after validation. */
export interface CassetteSettings {
  /** Absolute path to write (from `--record` or `KEEN_RECORD`). */
  record?: string;
  /** `demo` or an absolute path to read. */
  replay?: string;
  loose: boolean;
  speed: number;
}

/**
 * Validates the flags; `KEEN_RECORD` stands in for `--record` (ignored when
 * replaying). Undefined when there is nothing to record or replay. Throws
 * UsageError (exit 2).
 */
export function cassetteSettings(flags: CassetteFlags, env: NodeJS.ProcessEnv = process.env): CassetteSettings | undefined {
  if (flags.record !== undefined && flags.replay !== undefined) throw new UsageError("--record and --replay cannot be combined");
  if (!flags.replay && (flags.replayLoose || flags.replaySpeed !== undefined)) {
    throw new UsageError(`${flags.replayLoose ? "--replay-loose" : "--replay-speed"} needs --replay <file>`);
  }
  let speed = 1;
  if (flags.replaySpeed !== undefined) {
    speed = Number(flags.replaySpeed);
    if (flags.replaySpeed.trim() === "" || !Number.isFinite(speed) || speed < 0) {
      throw new UsageError(`--replay-speed must be 0 (at once), 1 (as recorded) or a factor N > 0, not "${flags.replaySpeed}"`);
    }
  }
  const replay = flags.replay === undefined ? undefined : flags.replay === DEMO_NAME ? DEMO_NAME : resolve(flags.replay);
  const recordPath = flags.record ?? (replay ? undefined : env.KEEN_RECORD?.trim() || undefined);
  if (!replay && !recordPath) return undefined;
  return { record: recordPath === undefined ? undefined : resolve(recordPath), replay, loose: Boolean(flags.replayLoose), speed };
}

/** Where a session's own copy of its recorded requests is kept, for `keen sessions export --cassette`. */
export function sessionCassettePath(paths: KeenPaths, sessionId: string): string {
  return join(paths.dataDir, "cassettes", `${sessionId}.jsonl`);
}

