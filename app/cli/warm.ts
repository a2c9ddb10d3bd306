import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startupSnapshot } from "node:v8";
import { warmToolSchemas } from "../tools/define.js";
import { warmConfigSchemas } from "./config.js";

/**
 * What the start-up snapshot holds (see app/cli/entry.ts): the modules a
 * command loads lazily, evaluated, plus work that depends on nothing but the
 * code (tool JSON Schemas, zod's compiled parsers). This part never reads
 * the environment, files or stdio: it runs once, on the build machine. A module
 * that touches the terminal or the environment when imported (blessed) must
 * not be imported from here.
 *
 * For dist/start.cjs's code cache (KEEN_CODE_CACHE=warm, no snapshot) it then
 * runs a whole `keen run` too (`warmRun`): the cache holds the functions that
 * were compiled when it is written, and a run calls many (set-up, the tools,
 * the engine, the store, the SDK's request) that the imports alone never do.
 */
export async function warmUp(): Promise<void> {
  const snapshot = startupSnapshot?.isBuildingSnapshot() ?? false;
  await Promise.all([
    import("./run.js"),
    import("../providers/anthropic.js"),
    import("../providers/anthropic-client.js"),
    // The code cache is read and deserialised whole by every start: it holds what a run with the default
    // provider compiles, not `keen sessions` (with protocol/'s zod schemas) or the OpenAI SDK, which
    // compile on use as before. A snapshot holds them: there they cost nothing until used.
    ...(snapshot ? [import("./sessions.js"), import("../providers/openai.js"), import("openai")] : []),
  ]);
  // Both are declared by modules run.js loads: import them first.
  warmToolSchemas();
  warmConfigSchemas();
  // A failed demo run still leaves a cache of the imports: better than none, so it is not an error.
  if (!snapshot) await warmRun().catch(() => {});
}

/**
 * `keen run --replay demo` (the shipped cassette: no network, no key) as a
 * run starts it, with a throw-away home, config and temporary directory (so
 * no user config, hook or skill of the build machine takes part, and the
 * demo's workspace goes with it) and its output dropped. Only for the code
 * cache: the process exits after it, and a snapshot must not hold its state.
 * A cache from a run up to its request took 60 M of 1,094 M instructions off
 * the next run's way to the request (callgrind), against the imports' cache.
 */
async function warmRun(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "keen-warm-"));
  // process.env itself, not a new object: the os module (tmpdir, homedir) reads the process's real environment.
  const saved = { ...process.env };
  const setEnv = (env: NodeJS.ProcessEnv) => {
    for (const name of Object.keys(process.env)) delete process.env[name];
    Object.assign(process.env, env);
  };
  setEnv({ PATH: saved.PATH, HOME: dir, KEEN_HOME: dir, TMPDIR: dir });
  const writes = [process.stdout.write, process.stderr.write] as const;
  // Output is dropped, its callbacks still called: the run waits for its last line to be written.
  const drop = (_chunk: unknown, encoding?: unknown, done?: unknown) => {
    const callback = typeof encoding === "function" ? encoding : done;
    if (typeof callback === "function") process.nextTick(callback as () => void);
    return true;
  };
  process.stdout.write = process.stderr.write = drop as typeof process.stdout.write;
  try {
    const { main } = await import("./main.js");
    await main(["run", "--replay", "demo", "--replay-speed", "0", "--sandbox", "off", "--headless", "--stream-deltas"]);
  } finally {
    [process.stdout.write, process.stderr.write] = writes;
    setEnv(saved);
    rmSync(dir, { recursive: true, force: true });
  }
}
