import { startupSnapshot } from "node:v8";
import { main } from "./main.js";

/**
 * The bundle's entry. `npm run build` runs it once under `node --build-snapshot`
 * (see scripts/build.mjs): it then evaluates what `keen run` needs before its
 * first request — commander, zod schemas, the agent, storage, the SDK clients —
 * and V8 serialises that heap into dist/keen.blob. Where that starts faster
 * than the plain bundle (scripts/snapshot.mjs measures it per node binary),
 * bin/keen starts node from the blob and a run skips compiling and evaluating
 * them. Started as a plain script, it is the same program: this file's static
 * imports are all it evaluates before the command's own `import()`.
 *
 * Nothing here may touch the process's environment at build time: the argv,
 * env, cwd and stdio that a run sees are the ones it was started with.
 */
function start(argv: string[]): void {
  // A closed stdout must never crash with a stack trace; writers notice it themselves.
  process.stdout.on("error", () => {});
  // Nor a closed stderr (a terminal gone after SIGHUP gives EIO): a diagnostic that cannot be shown is dropped.
  process.stderr.on("error", () => {});
  main(argv).then(
    (code) => process.exit(code),
    (error) => {
      process.stderr.write(`keen: internal error: ${String(error)}\n`);
      process.exit(1);
    },
  );
}

// node:v8 loads on first use (scripts/build.mjs): only a start that may be building the snapshot asks it.
if (process.execArgv.includes("--build-snapshot") && startupSnapshot?.isBuildingSnapshot()) {
  // The builder serialises the heap once this has settled and the event loop is empty.
  import("./warm.js").then((warm) => warm.warmUp()).catch((error) => {
    process.stderr.write(`keen: building the start-up snapshot failed: ${String(error?.stack ?? error)}\n`);
    process.exit(1);
  });
  // Started from the blob, node puts the arguments after `--` at argv[1].
  startupSnapshot.setDeserializeMainFunction(() => start(process.argv.slice(1)));
} else if (process.env.KEEN_CODE_CACHE === "warm") {
  // dist/start.cjs's code cache, made by the build: compile what a run needs (the snapshot's warm-up), then exit.
  import("./warm.js").then((warm) => warm.warmUp()).then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(`keen: warming the code cache failed: ${String(error?.stack ?? error)}\n`);
      process.exit(1);
    },
  );
} else {
  start(process.argv.slice(2));
}
