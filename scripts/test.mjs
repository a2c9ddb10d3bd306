// `npm test`: the build, then the type check, the unit tests and the e2e suite side by side.
// Each alone leaves a core idle for part of its time (tsc is one core's work; the e2e suite waits on
// processes, terminals and timers), so they share the two cores rather than take turns. A type
// error or a failed unit test stops the e2e run at once (SIGTERM: its clean-up check still runs),
// so a broken change fails as early as before. tsc's incremental state lives in node_modules/.cache.
// Reports: the e2e files as they end, each unit shard and tsc whole when they end.
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const bin = (name) => join(root, "node_modules/.bin", name);

function run(cmd, args, { capture = false, env = process.env, started } = {}) {
  return new Promise((done) => {
    const child = spawn(cmd, args, { cwd: root, env, stdio: ["ignore", capture ? "pipe" : "inherit", capture ? "pipe" : "inherit"] });
    const out = [];
    child.stdout?.on("data", (c) => out.push(c));
    child.stderr?.on("data", (c) => out.push(c));
    started?.(child);
    child.on("error", (err) => done({ code: 1, out: `${cmd}: ${err.message}\n` }));
    child.on("close", (code, signal) => done({ code: code ?? (signal ? 1 : 0), out: Buffer.concat(out).toString() }));
  });
}
const script = (file, env, started) => run(process.execPath, [join(root, "scripts", file)], { env, started });

// A plain-bundle start-up decision already measured for this node is kept (scripts/build.mjs says why).
if ((await script("build.mjs", { ...process.env, KEEN_BUILD_REUSE_DECISION: "1" })).code !== 0) process.exit(1);
const cache = join(root, "node_modules/.cache/keen");
mkdirSync(cache, { recursive: true });
const started = Date.now();
let e2eChild;
// Three e2e workers once tsc and the unit tests are done (test-e2e.mjs says why); two before, beside them.
const e2e = script("test-e2e.mjs", { KEEN_E2E_JOBS_LATER: "3", ...process.env }, (child) => (e2eChild = child));
const typecheck = run(bin("tsc"), ["--noEmit", "--incremental", "--tsBuildInfoFile", join(cache, "tsbuildinfo")], { capture: true });
const unit = await script("test-unit.mjs");
if (unit.code !== 0) e2eChild.kill("SIGTERM");
const types = await typecheck;
if (unit.code === 0 && types.code === 0) e2eChild.kill("SIGUSR2");
process.stdout.write(`\n── tsc --noEmit: ${types.code === 0 ? "no errors" : "failed"} (${((Date.now() - started) / 1000).toFixed(1)} s) ──\n${types.out}`);
if (types.code !== 0) e2eChild.kill("SIGTERM");
const e2eCode = (await e2e).code;
const verdict = (code) => (code === 0 ? "passed" : "FAILED");
process.stdout.write(`\nnpm test: test:unit ${verdict(unit.code)}, tsc ${verdict(types.code)}, test:e2e ${unit.code || types.code ? "stopped" : verdict(e2eCode)} (${((Date.now() - started) / 1000).toFixed(1)} s after the build)\n`);
process.exit(unit.code || types.code || e2eCode);
