// Runs the unit tests (every *.test.ts outside test/e2e and test/build) as `npm run test:unit`.
// `node --test` on Node 20 starts one process per file, and Node plus tsx cost ~1 s of CPU each
// time: with 60-odd files that start-up was more than half of the suite. Here the files are split
// into one shard per core (two at least) and each shard imports its files into one process, where
// node:test runs them one after another (run-shard.mjs). Unit tests start no Keen and share no
// global state they do not restore, so one process holds many files. Arguments: test files to run
// (default: all); KEEN_TEST_SHARDS overrides the shard count.
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, relative } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const skip = new Set(["test/e2e", "test/build", "test/bench", "test/fixtures"]);
const find = (dir) => readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => {
  const path = join(dir, e.name);
  if (e.isDirectory()) return skip.has(path) ? [] : find(path);
  return e.name.endsWith(".test.ts") ? [path] : [];
});
const args = process.argv.slice(2);
const files = (args.length ? args.map((f) => relative(root, join(process.cwd(), f))) : find("test")).sort();
const count = Math.max(1, Math.min(files.length, Number(process.env.KEEN_TEST_SHARDS) || Math.max(2, availableParallelism())));

// Balance the shards by file size (a rough stand-in for run time), biggest first.
const shards = Array.from({ length: count }, () => ({ files: [], weight: 0 }));
for (const file of [...files].sort((a, b) => statSync(join(root, b)).size - statSync(join(root, a)).size)) {
  const lightest = shards.reduce((a, b) => (b.weight < a.weight ? b : a));
  lightest.files.push(file);
  lightest.weight += statSync(join(root, file)).size;
}

const started = Date.now();
const results = await Promise.all(shards.map((shard, i) => new Promise((done) => {
  // Each shard's report is printed whole when it ends, so two shards' lines never interleave.
  const out = [];
  const child = spawn(process.execPath, ["--import", "tsx", "--test-reporter=spec", join(root, "scripts/run-shard.mjs"), ...shard.files], {
    cwd: root, stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (c) => out.push(c));
  child.stderr.on("data", (c) => out.push(c));
  child.on("close", (code, signal) => {
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    process.stdout.write(`\n── unit shard ${i + 1}/${count}: ${shard.files.length} files, ${seconds} s ──\n${Buffer.concat(out).toString()}`);
    done(code ?? (signal ? 1 : 0));
  });
})));
const failed = results.filter((code) => code !== 0).length;
console.log(`\ntest:unit: ${files.length} files in ${count} processes, ${((Date.now() - started) / 1000).toFixed(1)} s; ${failed ? `${failed} shard(s) failed` : "all passed"}`);
process.exit(failed ? 1 : 0);
