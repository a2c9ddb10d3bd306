/**
 * dist/start.cjs, bin/keen's way into the plain bundle with a V8 code cache
 * (dist/code-cache/<node version>-<arch>-<build id>.bin). Each case runs a
 * copy of bin/ and dist/ (node_modules linked) with KEEN_SNAPSHOT=off, so
 * bin/keen goes through start.cjs whatever the build decided (test/build/launcher-decisions.test.ts).
 * Not a plain decision made with dist/snapshot.mjs: that warms a code cache too,
 * which each case would have to delete again.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { makeSandbox } from "../e2e/harness.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeTempDir } from "../temp.js";
import { inPty } from "../bench/pty.js";

const ROOT = resolve(import.meta.dirname, "../..");
const PATH = [dirname(process.execPath), process.env.PATH].join(delimiter);

const server = useMockLLMServer();

/** A copy of bin/ and dist/ without the code cache (nor a snapshot, which KEEN_SNAPSHOT=off would not start anyway). */
function copyCheckout(): { bin: string; dist: string; cache: string } {
  const root = makeTempDir("keen-code-cache-");
  cpSync(join(ROOT, "bin"), join(root, "bin"), { recursive: true });
  const skip = new Set([join(ROOT, "dist", "code-cache"), join(ROOT, "dist", "keen.blob")]);
  cpSync(join(ROOT, "dist"), join(root, "dist"), { recursive: true, verbatimSymlinks: true, preserveTimestamps: true, filter: (src) => !skip.has(src) });
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  const dist = join(root, "dist");
  assert.ok(!existsSync(join(dist, "code-cache")));
  const id = createHash("sha256").update(readFileSync(join(dist, "keen.cjs"))).digest("hex").slice(0, 16);
  return { bin: join(root, "bin", "keen"), dist, cache: join(dist, "code-cache", `${process.version}-${process.arch}-${id}.bin`) };
}

/**
 * A start of the program that does no more than print: the title of `keen protocol schema`. Not
 * `--version`, which start.cjs answers without compiling the bundle (test/build/launcher-shortcut.test.ts).
 */
function schemaTitle(bin: string, env: Record<string, string> = {}): string {
  return JSON.parse(execFileSync(bin, ["protocol", "schema"], { env: { ...process.env, PATH, KEEN_SNAPSHOT: "off", ...env }, encoding: "utf8" })).title;
}
const TITLE = "Keen JSON-lines protocol, one line";

/** Keen's cache files in dist/code-cache/, without the directory of Node's own compile cache (Node 22.1+) beside them. */
const keenCaches = (dir: string) => readdirSync(dir).filter((name) => name !== "modules");

test("the build leaves a code cache for its node, named by the bundle's hash, made by the run warm-up", () => {
  const dist = join(ROOT, "dist");
  const id = createHash("sha256").update(readFileSync(join(dist, "keen.cjs"))).digest("hex").slice(0, 16);
  const cache = join(dist, "code-cache", `${process.version}-${process.arch}-${id}.bin`);
  assert.ok(existsSync(cache), `${cache} exists: ${existsSync(join(dist, "code-cache")) ? readdirSync(join(dist, "code-cache")).join(" ") : "no code-cache/"}`);
  assert.ok(readFileSync(join(dist, "start.cjs"), "utf8").includes(id), "start.cjs names the cache by this bundle's hash");
});

test("the first start writes the cache, later starts read it and leave it as it is", () => {
  const { bin, cache } = copyCheckout();
  assert.equal(schemaTitle(bin), TITLE);
  assert.ok(existsSync(cache), "written at the first start's exit");
  const first = statSync(cache);
  assert.equal(schemaTitle(bin), TITLE);
  const second = statSync(cache);
  assert.equal(second.ino, first.ino, "not rewritten");
  assert.equal(second.mtimeMs, first.mtimeMs);
  assert.deepEqual(keenCaches(dirname(cache)), [cache.split("/").at(-1)], "no temporary file left");
});

test("a run started with the cache answers as without it; a cache V8 refuses is ignored, not rewritten", async () => {
  const { bin, cache } = copyCheckout();
  const sb = makeSandbox(server.url);
  const answer = async () => {
    server.enqueue({ text: "Hello from the mock." });
    return sb.run(["run", "--sandbox", "off", "hi"], { bin, env: { PATH, KEEN_SNAPSHOT: "off" } });
  };
  const cold = await answer();
  assert.equal(cold.code, 0, cold.stderr);
  assert.ok(existsSync(cache));
  const warm = await answer();
  assert.equal(warm.code, 0, warm.stderr);
  assert.equal(warm.stdout, cold.stdout);
  // Garbage where the cache should be: V8's check refuses it, the bundle compiles from source.
  writeFileSync(cache, Buffer.alloc(4096, 7));
  const refused = await answer();
  assert.equal(refused.code, 0, refused.stderr);
  assert.equal(refused.stdout, cold.stdout);
  assert.deepEqual(readFileSync(cache), Buffer.alloc(4096, 7), "a refused cache is not rewritten at every exit");
});

test("KEEN_CODE_CACHE=off reads and writes none; KEEN_CODE_CACHE=warm writes one and prints nothing", () => {
  const { bin, dist, cache } = copyCheckout();
  assert.equal(schemaTitle(bin, { KEEN_CODE_CACHE: "off" }), TITLE);
  assert.equal(existsSync(cache), false);
  const out = execFileSync(process.execPath, [join(dist, "start.cjs")], { env: { ...process.env, KEEN_CODE_CACHE: "warm" }, encoding: "utf8" });
  assert.equal(out, "");
  assert.ok(statSync(cache).size > 0);
});

test("a side bundle (ajv, for --output-schema) gets a cache of its own at its first load, named by its own hash; later starts read it", async () => {
  const { bin, dist, cache } = copyCheckout();
  const sb = makeSandbox(server.url);
  const schema = join(sb.root, "schema.json");
  writeFileSync(schema, JSON.stringify({ type: "object", properties: { answer: { type: "number" } }, required: ["answer"] }));
  const id = createHash("sha256").update(readFileSync(join(dist, "ajv.cjs"))).digest("hex").slice(0, 16);
  const side = join(dist, "code-cache", `${process.version}-${process.arch}-ajv-${id}.bin`);
  const answer = async () => {
    server.enqueue({ toolCalls: [{ name: "structured_output", input: { answer: 42 } }] });
    return sb.run(["run", "--sandbox", "off", "--output-schema", schema, "q"], { bin, env: { PATH, KEEN_SNAPSHOT: "off" } });
  };
  const cold = await answer();
  assert.deepEqual([cold.code, cold.stdout], [0, '{"answer":42}\n'], cold.stderr);
  assert.ok(existsSync(side), `${side}: ${readdirSync(dirname(cache)).join(" ")}`);
  const first = statSync(side);
  const warm = await answer();
  assert.deepEqual([warm.code, warm.stdout], [0, '{"answer":42}\n'], warm.stderr);
  assert.equal(statSync(side).mtimeMs, first.mtimeMs, "read, not rewritten");
  assert.deepEqual(keenCaches(dirname(cache)).sort(), [cache, side].map((f) => f.split("/").at(-1)).sort(), "no temporary file left");
});

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
const nodeKeepsCaches = major > 22 || (major === 22 && minor >= 1);
const hasPty = spawnSync("script", ["--version"], { stdio: "ignore" }).status === 0;

test("on Node 22.1+, what Keen requires from node_modules (blessed, for the TUI) loads from the code cache Node keeps in dist/code-cache/modules", {
  skip: !nodeKeepsCaches ? `module.enableCompileCache needs Node 22.1 or newer (this is ${process.version})` : !hasPty ? "util-linux script (for a pty) is not installed" : false,
}, async () => {
  const { bin, dist } = copyCheckout();
  const sandbox = makeSandbox(server.url);
  const log = join(dirname(dist), "compile-cache.log");
  // Node's own account of each module it compiles, on stderr; the TUI has the terminal.
  const start = () => inPty(["sh", "-c", 'exec "$0" 2>>"$1"', bin, log], { ...sandbox.env, PATH, KEEN_SNAPSHOT: "off", NODE_DEBUG_NATIVE: "COMPILE_CACHE" }, sandbox.workspace, /Type a prompt/);
  await start();
  const first = readFileSync(log, "utf8");
  await start();
  const second = readFileSync(log, "utf8").slice(first.length);
  // The TUI loads blessed file by file (app/tui/blessed-core.ts): its screen widget among them.
  const blessed = /CommonJS \S+\/node_modules\/blessed\/lib\/widgets\/screen\.js/;
  assert.match(first, blessed, first.slice(0, 500));
  assert.doesNotMatch(first, new RegExp(`${blessed.source} was accepted`));
  assert.match(second, new RegExp(`${blessed.source} was accepted`), second.slice(0, 1000));
  assert.ok(readdirSync(join(dist, "code-cache", "modules")).length > 0);
});
