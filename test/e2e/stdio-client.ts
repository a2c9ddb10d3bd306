import { spawn, type ChildProcess } from "node:child_process";
import { KEEN_BIN } from "./harness.js";

/** A scripted client of `keen stdio`: send commands, wait for lines, read the whole stream. */
export interface StdioClient {
  child: ChildProcess;
  /** Every JSON line so far, parsed. */
  lines: Record<string, any>[];
  send(command: Record<string, unknown> | string): void;
  /** Resolves with the first line from index `from` on that matches (default: any line after the last `next`). */
  next(match: (line: Record<string, any>) => boolean, from?: number): Promise<Record<string, any>>;
  /** Resolves with the response to the command with this id. */
  response(id: string): Promise<Record<string, any>>;
  /** Closes stdin and resolves with the exit code and stderr. */
  end(): Promise<{ code: number | null; stderr: string }>;
  exited: Promise<{ code: number | null; stderr: string }>;
}

/** Spawns `bin/keen stdio …` with `env`; killed after `timeoutMs` so a hang fails the test instead of blocking it. */
export function startStdio(args: string[], env: Record<string, string | undefined>, cwd: string, timeoutMs = 120_000): StdioClient {
  const full: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete full[k];
    else full[k] = v;
  }
  const child = spawn(KEEN_BIN, ["stdio", ...args], { cwd, env: full, stdio: ["pipe", "pipe", "pipe"] });
  const lines: Record<string, any>[] = [];
  const waiters: (() => void)[] = [];
  let buffer = "";
  let stderr = "";
  let cursor = 0;
  child.stdout!.setEncoding("utf8").on("data", (d: string) => {
    buffer += d;
    for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
      lines.push(JSON.parse(buffer.slice(0, at)));
      buffer = buffer.slice(at + 1);
    }
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => {
    child.on("close", (code) => {
      clearTimeout(timer);
      for (const wake of waiters.splice(0)) wake();
      resolve({ code, stderr });
    });
  });
  let closed = false;
  child.on("close", () => (closed = true));
  const next = async (match: (line: Record<string, any>) => boolean, from = cursor) => {
    for (;;) {
      const index = lines.findIndex((l, i) => i >= from && match(l));
      if (index >= 0) {
        cursor = index + 1;
        return lines[index]!;
      }
      if (closed) throw new Error(`keen stdio exited before the expected line; stderr: ${stderr}\nlines: ${lines.map((l) => l.kind).join(" ")}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return {
    child,
    lines,
    send: (command) => child.stdin!.write(`${typeof command === "string" ? command : JSON.stringify(command)}\n`),
    next,
    response: (id) => next((l) => l.kind === "response" && l.id === id, 0),
    end() {
      child.stdin!.end();
      return exited;
    },
    exited,
  };
}

/** What a scripted `keen stdio` run wrote. */
export interface ScriptRun {
  code: number | null;
  stderr: string;
  lines: Record<string, any>[];
  /** The response to the command with this id (as given: string or number); fails when there is none or more than one. */
  response(id: string | number): Record<string, any>;
}

/**
 * The simplest client there is: writes every command at once, closes stdin
 * and reads what `keen stdio` writes until it exits. Nothing waits for an
 * answer before the next command is written.
 */
export async function runScript(
  run: (args: string[], options: { stdin: string }) => Promise<{ code: number | null; stdout: string; stderr: string }>,
  args: string[], commands: (Record<string, unknown> | string)[],
): Promise<ScriptRun> {
  const stdin = commands.map((c) => `${typeof c === "string" ? c : JSON.stringify(c)}\n`).join("");
  const r = await run(["stdio", ...args], { stdin });
  const lines = r.stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, any>);
  return {
    code: r.code, stderr: r.stderr, lines,
    response(id) {
      const found = lines.filter((l) => l.kind === "response" && l.id === id);
      if (found.length !== 1) throw new Error(`${found.length} responses to ${JSON.stringify(id)}; stderr: ${r.stderr}\nlines: ${lines.map((l) => JSON.stringify(l)).join("\n")}`);
      return found[0]!;
    },
  };
}
