/**
 * bin/keen and what `npm run build` leaves in dist/ (which `npm test` builds
 * first): the bundle, its start-up snapshot, and the check that a snapshot only
 * meets the node binary that built it. Each case runs a copy of bin/ and dist/
 * (node_modules linked) so it can change files without touching the checkout.
 */
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { makeSandbox, runKeen, type KeenRun } from "../e2e/harness.js";
import { startMockLLMServer, type MockLLMServer } from "../fakes/mock-llm-server.js";

const ROOT = resolve(import.meta.dirname, "../..");
const DIST = join(ROOT, "dist");

let server: MockLLMServer;
before(async () => {
  server = await startMockLLMServer();
});
after(() => server.close());

/** A copy of bin/ and dist/ (symlinks and mtimes kept) next to a link to node_modules. */
function copyCheckout(): { bin: string; dist: string } {
  const root = mkdtempSync(join(tmpdir(), "keen-launcher-"));
  cpSync(join(ROOT, "bin"), join(root, "bin"), { recursive: true });
  cpSync(DIST, join(root, "dist"), { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  return { bin: join(root, "bin", "keen"), dist: join(root, "dist") };
}

async function answer(bin: string): Promise<KeenRun> {
  const sb = makeSandbox(server.url);
  server.enqueue({ text: "Hello from the mock." });
  return sb.run(["run", "hi"], { bin });
}

test("the build leaves the bundle, its start-up snapshot, and a link to the node that built it", () => {
  for (const file of ["keen.cjs", "keen.blob", "blob-node", "blob-node.mtime"]) assert.ok(existsSync(join(DIST, file)), `dist/${file}`);
  const builder = statSync(join(DIST, "blob-node"), { bigint: true });
  const running = statSync(process.execPath, { bigint: true });
  assert.equal(builder.ino, running.ino, "npm test builds with the node that runs it");
  assert.equal(statSync(join(DIST, "blob-node.mtime"), { bigint: true }).mtimeNs, running.mtimeNs);
});

test("the ACP SDK is a side bundle that only `keen acp` requires: not in keen.cjs, not in the snapshot", () => {
  const bundle = readFileSync(join(DIST, "keen.cjs"), "utf8");
  assert.ok(existsSync(join(DIST, "acp-sdk.cjs")));
  assert.ok(bundle.includes('require("./acp-sdk.cjs")'));
  // A method name only the SDK's tables spell out.
  assert.ok(!bundle.includes("session/request_permission"), "the SDK's code is not in the main bundle");
  assert.ok(readFileSync(join(DIST, "acp-sdk.cjs"), "utf8").includes("session/request_permission"));
});

test("with the node that built it, bin/keen starts from the snapshot", async () => {
  const copy = copyCheckout();
  const ok = await answer(copy.bin);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, "Hello from the mock.\n");
  // Proof that the blob is what starts: a broken one now fails to load.
  writeFileSync(join(copy.dist, "keen.blob"), "not a snapshot");
  const broken = await runKeen(["--version"], { bin: copy.bin });
  assert.notEqual(broken.code, 0);
  assert.equal(broken.stdout, "");
});

test("a snapshot from another node binary is not used: the same bundle runs as a plain script", async () => {
  const copy = copyCheckout();
  writeFileSync(join(copy.dist, "keen.blob"), "not a snapshot");
  // Another binary on the link (the build's node replaced by a different file)…
  rmSync(join(copy.dist, "blob-node"));
  symlinkSync("/bin/sh", join(copy.dist, "blob-node"));
  let run = await answer(copy.bin);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, "Hello from the mock.\n");
  // …or the same path with a new modification time (an upgrade in place).
  rmSync(join(copy.dist, "blob-node"));
  symlinkSync(process.execPath, join(copy.dist, "blob-node"));
  writeFileSync(join(copy.dist, "blob-node.mtime"), "touched now\n");
  run = await answer(copy.bin);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, "Hello from the mock.\n");
});

test("without a snapshot the bundle still runs; without the bundle the launcher says how to build it", async () => {
  const copy = copyCheckout();
  rmSync(join(copy.dist, "keen.blob"));
  const run = await answer(copy.bin);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, "Hello from the mock.\n");
  rmSync(copy.dist, { recursive: true });
  const missing = await runKeen(["--version"], { bin: copy.bin });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /the bundle is missing; run `npm install` or `npm run build`/);
  assert.equal(missing.stdout, "");
});

test("without node on PATH the launcher says so", async () => {
  const run = await runKeen(["--version"], { env: { PATH: "/nonexistent" } });
  assert.equal(run.code, 127);
  assert.equal(run.stderr, "keen: node is not on PATH (Keen needs Node.js 20 or newer)\n");
  assert.equal(run.stdout, "");
});

test("started through a symlink (as npm links bin/keen), the launcher finds dist/", async () => {
  const copy = copyCheckout();
  const link = join(mkdtempSync(join(tmpdir(), "keen-link-")), "keen");
  symlinkSync(copy.bin, link);
  const run = await answer(link);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, "Hello from the mock.\n");
});
