import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { secretNameGlobs } from "../permissions/secret-names.js";
import { linuxTools } from "./deps.js";
import { terminateInside } from "./inner-signal.js";
import { keeper, shellQuote } from "./keeper.js";
import type { SandboxPolicy } from "./policy.js";
import { protectedPaths } from "./protected-paths.js";
import { presentReadDenies } from "./read-denies.js";
import { createDirectoryListings, createSecretScanner, type SecretScanner } from "./secret-paths.js";
import { startSpare, type Spare, type SpawnPlace } from "./spare.js";
import { sandboxTempRoot } from "./temp-root.js";
import { registerAudit, runAudit, type Audit } from "./audit.js";
import { outsideWorkspace } from "./outside-workspace.js";

// The ONE place that knows @anthropic-ai/sandbox-runtime (a preview release): everything
// else sees CommandSandbox. The library is loaded on the first sandboxed command (or a warm-up),
// never at start-up: it is a side bundle of its own, dist/sandbox-runtime.cjs (93 ms CPU to load
// on Node 20, 174 ms as the package's ES modules), that finds its seccomp helper in the installed
// package (see scripts/build.mjs).
type Library = typeof import("@anthropic-ai/sandbox-runtime");
type Manager = Library["SandboxManager"];
type RuntimeConfig = import("@anthropic-ai/sandbox-runtime").SandboxRuntimeConfig;

/** The answer about a host no rule allows: allow, or deny with a reason the model and the user see. */
export type NetworkDecision = { allow: true } | { allow: false; reason: string };
/** Asks about a host the allowlist does not name (Keen's permission flow), for one command. */
export type NetworkAsk = (host: string, port: number | undefined, about?: { url?: string }) => Promise<NetworkDecision>;

/** A command ready to spawn inside the sandbox. */
export interface WrappedCommand {
  /** Spawn `bash -c <script>` (in its own process group, as bash.ts does). */
  script: string;
  /**
   * Call once the command has exited: ends its network grants, removes the protected paths
   * it created; returns what the sandbox blocked or removed, if anything.
   */
  finish(): string | undefined;
  /**
   * The first signal of a stop (interrupt, timeout): SIGTERM to the command's processes
   * inside the sandbox, which bubblewrap does not pass on. `pid` is the spawned `bash -c`.
   * Returns false when there was no process to signal inside (yet): then signal the group.
   */
  terminate(pid: number): boolean;
}

/** Confines commands; built once per session from its policy. */
export interface CommandSandbox {
  readonly policy: SandboxPolicy;
  /**
   * Wraps a bash command line. `ask` decides hosts outside the allowlist while it runs
   * (absent: denied). `audit: false` skips the check after it (see `finish`), for a
   * long-lived process whose end says nothing about who made what meanwhile.
   */
  wrap(command: string, ask?: NetworkAsk, options?: { audit?: boolean }): Promise<WrappedCommand>;
  /**
   * Starts what the first `wrap` waits for (the library's load, its proxies and bridges) in the
   * background, so a turn's first bash call finds it ready. A failure is kept for that call to report.
   */
  warm(): void;
  /**
   * Starts a bash command line confined (the bash tool's way): `bash -c` in its own process group,
   * stdin /dev/null, in `place`. On Linux it runs in the spare started after the call before when
   * that fits (spare.ts), and starts the next one. Call `begin` once the child's listeners are on.
   */
  spawn(command: string, ask: NetworkAsk | undefined, place: SpawnPlace): Promise<SpawnedCommand>;
  /** The session is over: a spare still waiting ends. */
  close(): void;
}

/** A confined command, spawned; it runs once `begin` is called. */
export interface SpawnedCommand extends Pick<WrappedCommand, "finish" | "terminate"> {
  child: ChildProcess;
  begin(): void;
}

let manager: Promise<Manager> | undefined;
let library: Promise<Library> | undefined;
let asking: NetworkAsk | undefined;

/**
 * Loads the library's code, nothing more: no process, socket or file, so a Keen that exits while it
 * loads leaves nothing behind (its proxies and bridges, started by `load`, register their clean-up
 * only once they are all up).
 */
function loadLibrary(): Promise<Library> {
  library ??= import("@anthropic-ai/sandbox-runtime");
  return library;
}

function load(policy: SandboxPolicy): Promise<Manager> {
  manager ??= (async () => {
    // Its sockets and files go in os.tmpdir(): the temp root, so a killed Keen leaves one directory, swept later.
    sandboxTempRoot();
    const { SandboxManager } = await loadLibrary();
    // Node's net requires cluster at a server's first listen, which the library's proxies are. Loaded here, through
    // the bundle's require, it loads with V8's defaults on, from Node's code cache (app/wasm-flags.ts): once a proxy
    // has set Keen's WebAssembly flags, net's own require would compile it from source.
    await import("node:cluster");
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
    filesystem: { denyRead: readDenies(policy), allowWrite: [policy.workspace, policy.tmpDir], denyWrite: policy.denyWrite },
    ...binaries(),
  };
}

// One per root for the process: every session, wrap and MCP server of a workspace shares what was listed.
const scanners = new Map<string, SecretScanner>();
const listings = new Map<string, ReturnType<typeof createDirectoryListings>>();

/**
 * What commands may not read, read from the disk now (called for every wrap). On Linux the
 * secret names below the workspace come as the paths found there (secret-paths.ts), marked
 * literal, so the library neither walks the tree for them nor reads a `[` in a name as a pattern;
 * the other denies that are not there are left out (read-denies.ts). macOS's sandbox matches
 * globs itself, when a file is opened: there they stay globs.
 */
function readDenies(policy: SandboxPolicy): RuntimeConfig["filesystem"]["denyRead"] {
  if (process.platform !== "linux") {
    return [...policy.denyRead, ...policy.secretRoots.flatMap((root) => secretNameGlobs().map((glob) => join(root, glob)))];
  }
  const found = policy.secretRoots.flatMap((root) => {
    let scanner = scanners.get(root);
    if (!scanner) scanners.set(root, (scanner = createSecretScanner(root)));
    return scanner.scan();
  });
  return [...presentReadDenies(policy.denyRead), ...found.map((path) => ({ path, literal: true as const }))];
}

/**
 * Linux: the bwrap and socat that deps.ts found on PATH (the ones whose presence let the sandbox
 * be chosen), by their paths, the library's own options for them. Its set-up then checks those
 * files instead of running `which` for each (two synchronous spawns), and wrapped commands start
 * that bwrap rather than whichever PATH names when they run.
 */
function binaries(): Pick<RuntimeConfig, "bwrapPath" | "socatPath"> {
  if (process.platform !== "linux") return {};
  const { bwrap, socat } = linuxTools();
  // The library takes absolute paths only; a relative PATH entry leaves the look-up to it.
  return { ...(bwrap && isAbsolute(bwrap) && { bwrapPath: bwrap }), ...(socat && isAbsolute(socat) && { socatPath: socat }) };
}

/**
 * The shell the library runs inside the sandbox: the bash on PATH, by its path, which a build-time
 * patch of the library takes as given instead of spawning `which bash` for every wrap
 * (scripts/sandbox-patches.mjs, "shell-path-as-given"). Unknown or relative: the library looks it up.
 */
function sandboxShell(): string | undefined {
  const { bash } = linuxTools();
  return bash && isAbsolute(bash) ? bash : undefined;
}

/**
 * A sandbox for one session's commands. Creating it loads nothing; the first `wrap` does.
 * A policy given as a function is built when first needed (it makes the session's temp
 * directory), so a session that never runs bash pays nothing for it.
 */
export function createCommandSandbox(
  policyOf: SandboxPolicy | (() => SandboxPolicy),
  options: { /** Told the pid of each spare once it waits (tests). */ onSpare?: (pid: number) => void } = {},
): CommandSandbox {
  let built = typeof policyOf === "function" ? undefined : policyOf;
  const current = () => (built ??= (policyOf as () => SandboxPolicy)());
  /** The next command's sandbox, started ahead (spare.ts); at most one. */
  let spare: Spare | undefined;
  let refilling = false;
  let closed = false;
  /** Sandboxed bash calls so far: spares start from the second on (see `spawn`). */
  let calls = 0;

  /** The policy and the loaded library, ready to wrap: the library reads the TMPDIR it gives commands from here, at wrap time. */
  async function loaded() {
    const policy = current();
    const sandbox = await load(policy);
    process.env.CLAUDE_CODE_TMPDIR = policy.tmpDir;
    return { policy, sandbox };
  }

  /** What a command started now may write and read (Linux), read from the disk now: compared when a spare is taken. */
  async function plan(policy: SandboxPolicy) {
    const { filesystem } = runtimeConfig(policy);
    // No placeholders: what is there is made read-only, what is not is audited after.
    let list = listings.get(policy.workspace);
    if (!list) listings.set(policy.workspace, (list = createDirectoryListings()));
    const found = await protectedPaths(policy.workspace, policy.denyWrite, list);
    filesystem.denyWrite = found.existing;
    return { filesystem, absent: found.absent, key: JSON.stringify(filesystem) };
  }

  async function makeSpare(sandbox: Manager, planned: Awaited<ReturnType<typeof plan>>, place: SpawnPlace): Promise<Spare> {
    const id = randomBytes(16).toString("base64url");
    // The library keeps a command's text for its violation records; a spare's command is not known yet.
    const script = await outsideWorkspace(() =>
      sandbox.wrapWithSandbox(keeper(), sandboxShell(), { filesystem: planned.filesystem }, undefined, { commandId: id, commandText: "(a command given to a sandbox started ahead)" }),
    );
    return startSpare(script, id, planned.key, place);
  }

  /** Starts the next call's sandbox, unless one waits already or the session is over. Never throws. */
  async function refill(place: SpawnPlace): Promise<void> {
    if (refilling || closed || spare?.waiting()) return;
    refilling = true;
    try {
      const { policy, sandbox } = await loaded();
      const made = await makeSpare(sandbox, await plan(policy), place);
      if (closed) made.discard();
      else {
        spare?.discard();
        spare = made;
        if (made.child.pid !== undefined) options.onSpare?.(made.child.pid);
      }
    } catch {
      // The next call wraps its own, and reports what fails then.
    } finally {
      refilling = false;
    }
  }

  /** The waiting spare when it was made for exactly this policy and place; a spare that does not fit is ended. */
  function takeSpare(key: string, place: SpawnPlace): Spare | undefined {
    const found = spare;
    spare = undefined;
    if (found?.waiting() && found.key === key && found.place.cwd === place.cwd && found.place.env === place.env) return found;
    found?.discard();
    return undefined;
  }

  return {
    get policy() {
      return current();
    },
    warm() {
      endBridgesAtExit();
      void load(current()).catch(() => {});
    },
    async wrap(command, ask, options) {
      const { policy, sandbox } = await loaded();
      // Tied to the proxy's records of this command; unguessable, as the library requires.
      const id = randomBytes(16).toString("base64url");
      let audit: Audit | undefined;
      let script: string;
      if (process.platform === "linux") {
        const planned = await plan(policy);
        if (options?.audit !== false) audit = { workspace: policy.workspace, absent: planned.absent };
        script = await outsideWorkspace(() => sandbox.wrapWithSandbox(keeper(command), sandboxShell(), { filesystem: planned.filesystem }, undefined, { commandId: id, commandText: command }));
        if (audit) registerAudit(audit);
      } else {
        const { filesystem } = runtimeConfig(policy);
        script = await sandbox.wrapWithSandbox(command, undefined, { filesystem }, undefined, { commandId: id, commandText: command });
      }
      asking = ask;
      return { script, ...ending(sandbox, id, ask, audit) };
    },
    async spawn(command, ask, place) {
      if (process.platform !== "linux") {
        const wrapped = await this.wrap(command, ask);
        const child = spawn("bash", ["-c", wrapped.script], { cwd: place.cwd, env: place.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
        return { child, begin() {}, finish: wrapped.finish, terminate: wrapped.terminate };
      }
      const { policy, sandbox } = await loaded();
      // The policy read from the disk now, as for any command: a spare made before a secret file or a
      // protected path appeared does not fit it, and is ended unused.
      const planned = await plan(policy);
      const ready = takeSpare(planned.key, place) ?? (await makeSpare(sandbox, planned, place));
      if (ready.child.pid === undefined) {
        ready.discard();
        throw new Error("bash could not be started");
      }
      const audit = { workspace: policy.workspace, absent: planned.absent };
      registerAudit(audit);
      asking = ask;
      // The next call's sandbox starts beside this command (or while the model writes its next step), once
      // a session has shown it makes more than one call: a one-shot run with one call would pay for a
      // spare it never uses (~100 ms of CPU beside its answer).
      if (++calls >= 2) setImmediate(() => void refill(place));
      return { child: ready.child, begin: () => ready.send(command), ...ending(sandbox, ready.id, ask, audit) };
    },
    close() {
      closed = true;
      spare?.discard();
      spare = undefined;
    },
  };
}

/** A wrapped command's end: its network grants and what the sandbox blocked or removed. */
function ending(sandbox: Manager, id: string, ask: NetworkAsk | undefined, audit: Audit | undefined): Pick<WrappedCommand, "finish" | "terminate"> {
  let finished = false;
  return {
    finish() {
      if (finished) return undefined;
      finished = true;
      if (asking === ask) asking = undefined;
      const report = [sandbox.annotateStderrWithSandboxFailures(id, "").trim(), audit ? runAudit(audit) : ""].filter(Boolean).join("\n");
      return report || undefined;
    },
    terminate: (pid) => process.platform === "linux" && terminateInside(pid),
  };
}

let bridgesEndAtExit = false;

/**
 * The library registers the clean-up of its socat bridges only once all of its set-up is done, so a
 * Keen that exits while a warm-up is still starting them would leave them running: at exit, every
 * socat this process started ends. (Linux only: the bridges exist only there.)
 */
function endBridgesAtExit(): void {
  if (bridgesEndAtExit || process.platform !== "linux") return;
  bridgesEndAtExit = true;
  process.on("exit", () => {
    for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
        // pid (comm) state ppid …: comm may hold spaces, so read from the last ')'.
        const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        if (ppid === process.pid && comm === "socat") process.kill(Number(pid), "SIGKILL");
      } catch {
        // Gone meanwhile, or not ours to read.
      }
    }
  });
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


/**
 * For MCP stdio servers with `"sandbox": true` (issue 18, item 5): the command and arguments
 * to spawn instead of `command args…`, confined by `policy` like bash (writes in the
 * workspace and its temp dir, no credential reads, network only to allowed hosts; hosts
 * outside the allowlist are denied, since a server's connections have no one to ask).
 * Spawn the result with the same environment scrub as bash (`toolEnv`), and kill its
 * process group when the server stops: the sandbox and everything in it end with it.
 */
export async function sandboxedSpawnArgs(command: string, args: string[], policy: SandboxPolicy): Promise<{ command: string; args: string[] }> {
  // Not audited: what a server that runs all session creates cannot be told from what the
  // user or the file tools wrote meanwhile. The names that exist stay read-only for it.
  const wrapped = await createCommandSandbox(policy).wrap([command, ...args].map(shellQuote).join(" "), undefined, { audit: false });
  return { command: "bash", args: ["-c", wrapped.script] };
}
