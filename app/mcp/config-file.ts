import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** A config file Keen was asked to change but cannot read as a JSON object: one line, for a usage error. */
export class ConfigFileError extends Error {
  /** A usage error for the CLI (main shows one line and exits with it). */
  readonly exitCode = 2;
}

/** The JSON object in `file` ({} when there is none). Throws ConfigFileError when it is not one. */
export function readJsonObject(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {};
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new ConfigFileError(`${file}: not valid JSON (${error instanceof Error ? error.message : String(error)}); fix it first`);
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new ConfigFileError(`${file}: not a JSON object; fix it first`);
  return value as Record<string, unknown>;
}

/**
 * Writes `value` to `file` atomically: a temporary file beside it, then a
 * rename, so a reader (another Keen, Claude Code) sees the old file or the
 * new one, never half of either. An existing file keeps its mode; a new one
 * gets `mode`.
 */
export function writeJsonAtomic(file: string, value: unknown, mode = 0o644): void {
  mkdirSync(dirname(file), { recursive: true });
  const keep = existsSync(file) ? statSync(file).mode & 0o777 : mode;
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: keep });
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}
