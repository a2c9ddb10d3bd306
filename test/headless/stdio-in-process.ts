import { Readable, Writable } from "node:stream";
import { stdioFromFlags } from "../../app/cli/stdio.js";
import type { RunFlags } from "../../app/cli/run-flags.js";
import { closePreconnect } from "../../app/providers/preconnect.js";

/** What one in-process `keen stdio` wrote: the same shape as test/e2e/stdio-client.ts's ScriptRun. */
export interface InProcessRun {
  code: number;
  lines: Record<string, any>[];
  /** The response to the command with this id; fails when there is none or more than one. */
  response(id: string | number): Record<string, any>;
}

/**
 * `keen stdio` with `flags`, run in this process through the same function the
 * bundle runs (app/cli/stdio.ts), on a stdin that holds every command and then
 * ends, as a client that writes all its commands and closes stdin at once. A
 * spawned Keen costs ~0.5 s of CPU; this costs milliseconds, so case tables of
 * the engine's answers live here and test/e2e keeps the process's own contract.
 * `env` (a sandbox's, test/e2e/harness.ts) and the working directory are set
 * for the run and restored after it.
 */
export async function stdioInProcess(
  flags: Omit<RunFlags, "stdin">, env: Record<string, string | undefined>, cwd: string, commands: (Record<string, unknown> | string)[],
): Promise<InProcessRun> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  const here = process.cwd();
  const set = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) (v === undefined ? delete process.env[k] : (process.env[k] = v));
  };
  let out = "";
  const stdout = new Writable({
    write(chunk, _encoding, done) {
      out += String(chunk);
      done();
    },
  });
  const stdin = Readable.from([commands.map((c) => `${typeof c === "string" ? c : JSON.stringify(c)}\n`).join("")]);
  set(env);
  process.chdir(cwd);
  let code: number;
  try {
    code = await stdioFromFlags(flags, false, { stdin, stdout });
  } finally {
    process.chdir(here);
    set(saved);
    // The run's early connection ends with it, as with a real Keen's process (test/cli/in-process.ts says why).
    await closePreconnect();
  }
  const lines = out.split("\n").filter(Boolean).map((line) => JSON.parse(line) as Record<string, any>);
  return {
    code, lines,
    response(id) {
      const found = lines.filter((l) => l.kind === "response" && l.id === id);
      if (found.length !== 1) throw new Error(`${found.length} responses to ${JSON.stringify(id)}; lines: ${lines.map((l) => JSON.stringify(l)).join("\n")}`);
      return found[0]!;
    },
  };
}
