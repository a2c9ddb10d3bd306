import { PERMISSION_MODES, isPermissionMode, type PermissionMode } from "../../protocol/modes.js";
import { cassetteSettings, type CassetteFlags, type CassetteSettings } from "./cassette-flags.js";
import type { Runner } from "./cli-runner-setup.js";
import type { SandboxMode } from "./config.js";
import { UsageError } from "./errors.js";

/*
 * The flags every session front end (the TUI, keen run, keen stdio, keen acp)
 * shares, validated here once; main.ts's `sessionOptions` declares them once
 * (apart, so a plain start never loads zod for --help or --version).
 */

/** The shared flags as commander parses them. */
export interface SessionFlags extends CassetteFlags {
  model?: string;
  permissionMode?: string;
  allowedTools?: string;
  disallowedTools?: string;
  maxTurns?: string;
  runner?: string;
  sandbox?: string;
  /** `--mcp-config`, repeatable. */
  mcpConfig?: string[];
}

/** The shared flags after validation. */
export interface SessionSettings {
  model?: string;
  permissionMode?: PermissionMode;
  allowedTools?: string[];
  disallowedTools?: string[];
  maxTurns?: number;
  /** `--runner`: who runs the turns (README "CLI runner"). */
  runner?: Runner;
  /** `--sandbox` */
  sandbox?: SandboxMode;
  /** `--mcp-config` files or JSON strings. */
  mcpConfig?: string[];
  /** `--record` / `KEEN_RECORD`, `--replay` and its companions. */
  cassette?: CassetteSettings;
}

/** Validates the shared flags; throws UsageError (exit 2) with one clear line. */
export function validateSessionFlags(flags: SessionFlags): SessionSettings {
  let maxTurns: number | undefined;
  if (flags.maxTurns !== undefined) {
    if (!/^\d+$/.test(flags.maxTurns) || Number(flags.maxTurns) < 1) {
      throw new UsageError(`--max-turns must be a positive integer, not "${flags.maxTurns}"`);
    }
    maxTurns = Number(flags.maxTurns);
  }
  if (flags.permissionMode !== undefined && !isPermissionMode(flags.permissionMode)) {
    throw new UsageError(`--permission-mode must be one of ${PERMISSION_MODES.join(", ")}, not "${flags.permissionMode}"`);
  }
  if (flags.model !== undefined && !flags.model.trim()) throw new UsageError("--model needs <provider>/<model>");
  const cassette = cassetteSettings(flags);
  return {
    ...(flags.model !== undefined ? { model: flags.model } : {}),
    ...(flags.permissionMode !== undefined ? { permissionMode: flags.permissionMode as PermissionMode } : {}),
    ...(flags.allowedTools !== undefined ? { allowedTools: splitList(flags.allowedTools) } : {}),
    ...(flags.disallowedTools !== undefined ? { disallowedTools: splitList(flags.disallowedTools) } : {}),
    ...(maxTurns !== undefined ? { maxTurns } : {}),
    ...(flags.runner !== undefined ? { runner: parseRunner(flags.runner) } : {}),
    ...(flags.sandbox !== undefined ? { sandbox: parseSandboxFlag(flags.sandbox) } : {}),
    ...(flags.mcpConfig?.length ? { mcpConfig: flags.mcpConfig } : {}),
    ...(cassette ? { cassette } : {}),
  };
}

/** `--runner`'s value, or a usage error. */
export function parseRunner(value: string): Runner {
  if (value !== "cli" && value !== "embedded") throw new UsageError(`--runner must be cli or embedded, not "${value}"`);
  return value;
}

/** `--sandbox` checked: on, off or auto. */
export function parseSandboxFlag(value: string): SandboxMode {
  if (value === "on" || value === "off" || value === "auto") return value;
  throw new UsageError(`--sandbox must be on, off or auto, not "${value}"`);
}

function splitList(value: string): string[] {
  return value.split(",").map((s) => s.trim()).filter(Boolean);
}
