// `npm test`: the build, then the type check alongside the unit tests, then the e2e suite.
// tsc is one core's work for ~20 s; run after the unit tests it left the second core idle, so it
// runs beside them (its output is printed whole when it ends). Its incremental state lives in
// node_modules/.cache, so a second run re-checks only what changed. The e2e suite starts only when
// both passed: it is the long part, and a type error usually means a test would fail anyway.
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const bin = (name) => join(root, "node_modules/.bin", name);

function run(cmd, args, { capture = false, env = process.env } = {}) {
  return new Promise((done) => {
    const child = spawn(cmd, args, { cwd: root, env, stdio: ["ignore", capture ? "pipe" : "inherit", capture ? "pipe" : "inherit"] });
    const out = [];
    child.stdout?.on("data", (c) => out.push(c));
    child.stderr?.on("data", (c) => out.push(c));
    child.on("error", (err) => done({ code: 1, out: `${cmd}: ${err.message}\n` }));
    child.on("close", (code, signal) => done({ code: code ?? (signal ? 1 : 0), out: Buffer.concat(out).toString() }));
  });
}
const script = (file, env) => run(process.execPath, [join(root, "scripts", file)], { env });

// A plain-bundle start-up decision already measured for this node is kept (scripts/build.mjs says why).
if ((await script("build.mjs", { ...process.env, KEEN_BUILD_REUSE_DECISION: "1" })).code !== 0) process.exit(1);
const cache = join(root, "node_modules/.cache/keen");
mkdirSync(cache, { recursive: true });
const started = Date.now();
const typecheck = run(bin("tsc"), ["--noEmit", "--incremental", "--tsBuildInfoFile", join(cache, "tsbuildinfo")], { capture: true });
const unit = await script("test-unit.mjs");
const types = await typecheck;
process.stdout.write(`\n── tsc --noEmit: ${types.code === 0 ? "no errors" : "failed"} (${((Date.now() - started) / 1000).toFixed(1)} s) ──\n${types.out}`);
if (unit.code !== 0 || types.code !== 0) process.exit(1);
process.exit((await script("test-e2e.mjs")).code);
