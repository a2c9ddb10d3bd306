/**
 * dist/start.cjs's shortcut: `keen --version` / `-V`, and `keen --help` / `-h` when stdout is not a
 * terminal, are answered with text the build baked in, without reading or compiling keen.cjs (nor,
 * bin/keen's part, deserialising a snapshot: test/build/launcher-decisions.test.ts). The proof that
 * keen.cjs is not loaded: a copy whose keen.cjs only says it was loaded and exits 3 still answers
 * them, while every other argv, `keen run` included, reaches that keen.cjs.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { runKeen, type KeenRun } from "../e2e/harness.js";
import { makeTempDir } from "../temp.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin", "keen");
const PATH = [dirname(process.execPath), process.env.PATH].join(delimiter);
const VERSION = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
const LOADED = "keen.cjs was loaded\n";
const noScript = spawnSync("script", ["--version"]).status !== 0 && "needs script(1) from util-linux for a pseudo-terminal";

/** bin/ and dist/ (no snapshot, no code cache) with a keen.cjs that only says it ran. */
function brokenCopy(): string {
  const root = makeTempDir("keen-shortcut-");
  cpSync(join(ROOT, "bin"), join(root, "bin"), { recursive: true });
  const skip = new Set([join(ROOT, "dist", "code-cache"), join(ROOT, "dist", "keen.blob")]);
  cpSync(join(ROOT, "dist"), join(root, "dist"), { recursive: true, verbatimSymlinks: true, filter: (src) => !skip.has(src) });
  writeFileSync(join(root, "dist", "keen.cjs"), `process.stderr.write(${JSON.stringify(LOADED)}); process.exit(3);\n`);
  return join(root, "bin", "keen");
}
const BROKEN = brokenCopy();

/** KEEN_SNAPSHOT=off: no blob to start from and no background measurement, whatever the build decided. */
const keen = (args: string[], bin = BIN, env: Record<string, string> = {}): Promise<KeenRun> =>
  runKeen(args, { bin, env: { PATH, KEEN_SNAPSHOT: "off", ...env } });

test("keen --version and -V print package.json's version without loading keen.cjs; keen run from the same copy loads it", async () => {
  for (const flag of ["--version", "-V"]) {
    const run = await keen([flag], BROKEN);
    assert.deepEqual({ code: run.code, stdout: run.stdout, stderr: run.stderr }, { code: 0, stdout: `${VERSION}\n`, stderr: "" }, flag);
    // The program prints the same bytes for it.
    const program = await keen([flag], BIN, { KEEN_SHORTCUT: "off" });
    assert.deepEqual({ code: program.code, stdout: program.stdout, stderr: program.stderr }, { code: 0, stdout: `${VERSION}\n`, stderr: "" }, flag);
  }
  const run = await keen(["run", "hi"], BROKEN);
  assert.equal(run.code, 3);
  assert.equal(run.stderr, LOADED);
});

test("keen --help and -h off a terminal print the program's own help, byte for byte, without loading keen.cjs", async () => {
  const program = await keen(["--help"], BIN, { KEEN_SHORTCUT: "off" });
  assert.equal(program.code, 0, program.stderr);
  assert.match(program.stdout, /^Usage: keen \[options\] \[command\]\n/);
  for (const flag of ["--help", "-h"]) {
    const run = await keen([flag], BROKEN);
    assert.deepEqual({ code: run.code, stdout: run.stdout, stderr: run.stderr }, { code: 0, stdout: program.stdout, stderr: "" }, flag);
  }
});

test("any other argv goes to the program: extra words, repeated or unknown flags, KEEN_SHORTCUT=off", async () => {
  for (const args of [["--version", "extra"], ["-V", "-V"], ["--versionx"], ["-v"], ["-h", "run"], ["--help", "--help"], []]) {
    const run = await keen(args, BROKEN);
    assert.equal(run.code, 3, JSON.stringify(args));
    assert.equal(run.stderr, LOADED, JSON.stringify(args));
  }
  const off = await keen(["--version"], BROKEN, { KEEN_SHORTCUT: "off" });
  assert.equal(off.code, 3);
  assert.equal(off.stderr, LOADED);
});

test("keen --help at a terminal goes to the program, which wraps the help to the terminal's width", { skip: noScript }, async () => {
  const run = await runKeen(["-qec", `${BROKEN} --help`, "/dev/null"], { bin: "script", env: { PATH, KEEN_SNAPSHOT: "off" } });
  assert.equal(run.code, 3);
  assert.match(run.stdout, /keen\.cjs was loaded/);
});
