import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import type { SandboxPolicy } from "./policy.js";
import { sandboxTempRoot } from "./temp-root.js";

// The ONE place that knows @anthropic-ai/sandbox-runtime (a preview release): everything
// else sees CommandSandbox. The library is loaded on the first sandboxed command, never at
// start-up (~100 ms, and zod 3 with it), and stays outside Keen's bundle: it finds its
// seccomp helpers next to its own files (see scripts/build.mjs).
type Library = typeof import("@anthropic-ai/sandbox-runtime");
type Manager = Library["SandboxManager"];
type RuntimeConfig = import("@anthropic-ai/sandbox-runtime").SandboxRuntimeConfig;

/** The answer about a host no rule allows: allow, or deny with a reason the model and the user see. */
export type NetworkDecision = { allow: true } | { allow: false; reason: string };
/** Asks about a host the allowlist does not name (Keen's permission flow), for one command. */
export type NetworkAsk = (host: string, port: number | undefined) => Promise<NetworkDecision>;

/** A command ready to spawn inside the sandbox. */
export interface WrappedCommand {
  /** Spawn `bash -c <script>` (in its own process group, as bash.ts does). */
  script: string;
  /** Call once the command has exited: ends its network grants; returns what the sandbox blocked, if anything. */
  finish(): string | undefined;
}

/** Confines commands; built once per session from its policy. */
export interface CommandSandbox {
  readonly policy: SandboxPolicy;
  /** Wraps a bash command line. `ask` decides hosts outside the allowlist while it runs (absent: denied). */
  wrap(command: string, ask?: NetworkAsk): Promise<WrappedCommand>;
}

let manager: Promise<Manager> | undefined;
let asking: NetworkAsk | undefined;

function load(policy: SandboxPolicy): Promise<Manager> {
  manager ??= (async () => {
    // Its sockets and files go in os.tmpdir(): the temp root, so a killed Keen leaves one directory, swept later.
    sandboxTempRoot();
    const { SandboxManager } = await import("@anthropic-ai/sandbox-runtime");
    // The network settings are the first session's: they come from the user's config file,
    // the same for every session of a process. The filesystem part is passed per command.
    await SandboxManager.initialize(runtimeConfig(policy), async ({ host, port }) => {
      const answer = asking ? await asking(host, port) : { allow: false as const, reason: notAllowed(host, port) };
      return answer.allow ? true : { allow: false as const, reason: answer.reason };
    });
    return SandboxManager;
  })();
  return manager;
}

function notAllowed(host: string, port: number | undefined): string {
  return `${host}${port ? `:${port}` : ""} is not in sandbox.network.allowedDomains of the user's Keen config`;
}

function runtimeConfig(policy: SandboxPolicy): RuntimeConfig {
  return {
    network: { allowedDomains: policy.allowedDomains, deniedDomains: [] },
    filesystem: { denyRead: policy.denyRead, allowWrite: [policy.workspace, policy.tmpDir], denyWrite: policy.denyWrite },
  };
}

/**
 * A sandbox for one session's commands. Creating it loads nothing; the first `wrap` does.
 * A policy given as a function is built when first needed (it makes the session's temp
 * directory), so a session that never runs bash pays nothing for it.
 */
export function createCommandSandbox(policyOf: SandboxPolicy | (() => SandboxPolicy)): CommandSandbox {
  let built = typeof policyOf === "function" ? undefined : policyOf;
  const current = () => (built ??= (policyOf as () => SandboxPolicy)());
  return {
    get policy() {
      return current();
    },
    async wrap(command, ask) {
      const policy = current();
      const sandbox = await load(policy);
      // Tied to the proxy's records of this command; unguessable, as the library requires.
      const id = randomBytes(16).toString("base64url");
      // The library reads the TMPDIR it gives commands from here, at wrap time.
      process.env.CLAUDE_CODE_TMPDIR = policy.tmpDir;
      const { filesystem } = runtimeConfig(policy);
      const script = await sandbox.wrapWithSandbox(command, undefined, { filesystem }, undefined, { commandId: id, commandText: command });
      asking = ask;
      let finished = false;
      return {
        script,
        finish() {
          if (finished) return undefined;
          finished = true;
          if (asking === ask) asking = undefined;
          const report = sandbox.annotateStderrWithSandboxFailures(id, "").trim();
          return report || undefined;
        },
      };
    },
  };
}

/**
 * Stops the sandbox's proxies so the process can end without process.exit (tests, a long-lived
 * host); the next `wrap` starts them again. Keen's CLI exits through process.exit and needs none.
 */
export async function disposeSandbox(): Promise<void> {
  const current = manager;
  manager = undefined;
  if (current) await (await current.catch(() => undefined))?.reset();
}

/** A fresh temporary directory for one session's commands, inside the process's sandbox temp root (removed with it). */
export function sessionTmpDir(): string {
  return mkdtempSync(join(sandboxTempRoot(), "session-"));
}

function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * For MCP stdio servers with `"sandbox": true` (issue 18, item 5): the command and arguments
 * to spawn instead of `command args…`, confined by `policy` like bash (writes in the
 * workspace and its temp dir, no credential reads, network only to allowed hosts; hosts
 * outside the allowlist are denied, since a server's connections have no one to ask).
 * Spawn the result with the same environment scrub as bash (`toolEnv`), and kill its
 * process group when the server stops: the sandbox and everything in it end with it.
 */
export async function sandboxedSpawnArgs(command: string, args: string[], policy: SandboxPolicy): Promise<{ command: string; args: string[] }> {
  const wrapped = await createCommandSandbox(policy).wrap([command, ...args].map(shellQuote).join(" "));
  return { command: "bash", args: ["-c", wrapped.script] };
}
