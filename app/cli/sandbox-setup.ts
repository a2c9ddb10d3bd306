import { join } from "node:path";
import { sandboxPolicy } from "../sandbox/policy.js";
import { sandboxSupport } from "../sandbox/deps.js";
import { createCommandSandbox, sandboxedSpawnArgs, sessionTmpDir, type CommandSandbox } from "../sandbox/runtime.js";
import { sandboxModeFor, type ResolvedConfig, type SandboxMode } from "./config.js";
import { UsageError } from "./errors.js";

/** What a session's bash runs in: a sandbox, or nothing (and why, when auto fell back). */
export interface SandboxChoice {
  sandbox?: CommandSandbox;
  /** Set when `auto` found the platform's dependencies missing: one line for stderr and the TUI. */
  fallback?: string;
}

let warned = false;

/**
 * The sandbox of a session from `--sandbox`, the user's and the project's config and the
 * platform. `on` without the dependencies is a usage error (exit 2) naming them; `auto`
 * without them runs bash unconfined and says so once per process on stderr.
 */
export function chooseSandbox(
  config: ResolvedConfig, flag: SandboxMode | undefined, env: NodeJS.ProcessEnv,
  where: { workspace: string; protectedPaths: string[]; allowProjectConfigEdits?: boolean; dataDir?: string },
): SandboxChoice {
  const mode = sandboxModeFor(config, flag);
  if (mode === "off") return {};
  const support = sandboxSupport(env, process.platform, where.dataDir && join(where.dataDir, "sandbox-probe.json"));
  if (!support.ok) {
    const need = `the sandbox needs ${support.missing}; install: ${support.install}`;
    if (mode === "on") throw new UsageError(`sandbox mode is on, but ${need}`);
    const fallback = `bash runs unconfined: ${need}; --sandbox off silences this`;
    if (!warned) process.stderr.write(`keen: ${fallback}\n`);
    warned = true;
    return { fallback };
  }
  // Built on the first bash call (or MCP server) that needs it: the session's temp directory is made then.
  return {
    sandbox: createCommandSandbox(() => sandboxPolicy({
      workspace: where.workspace, tmpDir: sessionTmpDir(), allowedDomains: config.sandbox?.network?.allowedDomains,
      guard: { protectedPaths: where.protectedPaths, allowProjectConfigEdits: where.allowProjectConfigEdits },
    })),
  };
}

/**
 * How the session's MCP stdio servers with `"sandbox": true` are confined: inside the
 * session's sandbox, with bash's policy (issue 18, item 5). Without one, the reason such
 * servers are refused (never started unconfined).
 */
export function mcpConfinement(sandbox: CommandSandbox | undefined, fallback: string | undefined) {
  if (sandbox) return (command: string, args: string[]) => sandboxedSpawnArgs(command, args, sandbox.policy);
  if (fallback) return `the sandbox cannot run here (${fallback.replace(/^bash runs unconfined: /, "").replace(/; --sandbox off silences this$/, "")})`;
  return "the sandbox is off for this session (--sandbox off or sandbox.mode)";
}
