import { spawn, type ChildProcess } from "node:child_process";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { createLineFramer, MAX_MESSAGE_BYTES } from "./line-framer.js";
import { createServerLog, type LogFilter } from "./server-log.js";

/** What a stdio server is started with. */
export interface StdioSpawn {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The server's stderr goes here (appended, cleaned and rotated: see createServerLog). */
  logFile: string;
  log?: LogFilter;
  /** Most bytes of one message from the server (default MAX_MESSAGE_BYTES). */
  maxMessageBytes?: number;
}

/** Process groups of every live server: killed when Keen exits, however it exits (short of SIGKILL). */
const live = new Set<number>();
let exitHookInstalled = false;
function trackGroup(pid: number): void {
  live.add(pid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const killAll = () => {
    for (const group of live) killGroup(group, "SIGKILL");
  };
  process.on("exit", killAll);
  // A signal nobody else handles (Ctrl-C while servers connect, before a front end listens) ends
  // node without its "exit" event: kill the groups, then die of the signal as node would have.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    const onSignal = () => {
      if (process.listenerCount(signal) > 1) return;
      killAll();
      process.off(signal, onSignal);
      process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

/** How long a server has to exit once its stdin closes, then after SIGTERM, before its group gets SIGKILL (MCP's stdio shutdown). */
const EOF_GRACE_MS = 1000;
const TERM_GRACE_MS = 2000;

/**
 * The SDK's Transport over a child process speaking newline-delimited JSON-RPC
 * on stdin/stdout. Unlike the SDK's StdioClientTransport, the child leads its
 * own process group (a server's own children, `npx` and the shells it runs,
 * are killed with it), its stderr goes to a log file instead of Keen's
 * terminal, and close kills the whole group. Messages are framed in linear
 * time and capped: a message past the cap (a huge result, a server that never
 * sends a newline) stops the server, with `failure` saying why.
 */
export class ProcessGroupTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child?: ChildProcess;
  /** How the server ended, once it has ("code 3", "signal SIGKILL"). */
  exit?: string;
  /** Why Keen stopped the server (its message was too large), once it has. */
  failure?: string;
  private exited?: Promise<void>;

  constructor(private readonly spec: StdioSpawn) {}

  start(): Promise<void> {
    const log = createServerLog(this.spec.logFile, this.spec.log);
    const limit = this.spec.maxMessageBytes ?? MAX_MESSAGE_BYTES;
    const framer = createLineFramer({
      maxBytes: limit,
      onLine: (line) => this.deliver(line),
      onOverflow: () => {
        this.failure = `the server sent a message over ${mebibytes(limit)} (the limit for one message); Keen stopped it`;
        void this.close(true);
      },
    });
    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(this.spec.command, this.spec.args, {
          cwd: this.spec.cwd, env: this.spec.env, detached: true, stdio: ["pipe", "pipe", "pipe"], windowsHide: true,
        });
      } catch (error) {
        log.end();
        return reject(error);
      }
      this.child = child;
      // "exit", not "close": a grandchild that keeps stdout open must not keep the server looking alive.
      this.exited = new Promise((done) => child.once("exit", () => done()));
      child.on("error", (error) => {
        reject(new Error(spawnMessage(this.spec.command, error)));
        this.onerror?.(error);
      });
      child.once("spawn", () => {
        trackGroup(child.pid!);
        resolve();
      });
      child.once("exit", (code, signal) => {
        this.exit = signal ? `signal ${signal}` : `code ${code}`;
        if (child.pid) {
          // What the server started dies with it.
          killGroup(child.pid, "SIGKILL");
          live.delete(child.pid);
        }
        framer.stop();
        this.onclose?.();
      });
      child.stdin!.on("error", (error) => this.onerror?.(error));
      child.stdout!.on("data", (chunk: Buffer) => framer.push(chunk));
      child.stderr!.setEncoding("utf8").on("data", (chunk: string) => log.push(chunk));
      // A grandchild may hold stderr open past the server: the log ends with the pipe, or with an error on it.
      child.stderr!.once("close", () => log.end());
    });
  }

  /**
   * How the server ended, when a failure came before its exit event: a write to a server that has
   * just exited fails (EPIPE) before Node reports the exit, on a busy machine. Then its stdin is
   * destroyed, and the exit is waited for, at most `ms`; otherwise nothing is waited for.
   */
  async exitAfterFailure(ms: number): Promise<string | undefined> {
    if (this.exit || !this.child?.stdin?.destroyed || !this.exited) return this.exit;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.exited, new Promise((done) => (timer = setTimeout(done, ms)))]);
    clearTimeout(timer);
    return this.exit;
  }

  private deliver(line: string): void {
    let message: JSONRPCMessage;
    try {
      message = JSON.parse(line) as JSONRPCMessage;
    } catch (error) {
      // A server that prints logs on stdout: the line is dropped, the connection stays.
      this.onerror?.(new Error(`not a JSON-RPC line on stdout: ${line.slice(0, 200)}`, { cause: error }));
      return;
    }
    this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed) return Promise.reject(new Error("the server is not running"));
    return new Promise((resolve, reject) => {
      stdin.write(`${JSON.stringify(message)}\n`, (error) => (error ? reject(error) : resolve()));
    });
  }

  /**
   * Ends the whole process group as MCP's stdio shutdown says: close stdin (a
   * server reads what was sent before, e.g. a cancellation, then exits), then
   * SIGTERM, then SIGKILL. Resolves once the child is gone. `now`: SIGTERM at
   * once (a server that floods stdout would not read its stdin closing).
   */
  async close(now = false): Promise<void> {
    const child = this.child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    child.stdin?.end();
    const grace = now ? 0 : EOF_GRACE_MS;
    const term = setTimeout(() => killGroup(child.pid!, "SIGTERM"), grace);
    const kill = setTimeout(() => killGroup(child.pid!, "SIGKILL"), grace + TERM_GRACE_MS);
    await this.exited;
    clearTimeout(term);
    clearTimeout(kill);
    // The leader may be gone while members that ignored SIGTERM live on.
    killGroup(child.pid, "SIGKILL");
  }
}

function mebibytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

function spawnMessage(command: string, error: Error & { code?: string }): string {
  if (error.code === "ENOENT") return `command not found: ${command}`;
  if (error.code === "EACCES") return `not executable: ${command}`;
  return `could not start ${command}: ${error.message}`;
}
