/**
 * The link bench's peer rows (test/bench/peers.ts) without the real CLIs: a
 * fake `claude` (test/fakes/fake-claude-link.mjs, a real streaming request over
 * the bench's TLS link) on PATH gives the Claude Code rows with numbers (one bench run: BENCH_RUNS=1,
 * link rows only, output in a temp BENCH_DIR); a failing one gives its reason and no figure
 * (the runner alone: bench.ts turns that reason into its note). The note for an absent peer
 * is every bench run's on this machine; another bench run here (~5 s of CPU) would only repeat it.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmodSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { promisify } from "node:util";
import { after, test } from "node:test";
import { makeTempDir, removeTempDir } from "../temp.js";
import { startMockLLMServer } from "../fakes/mock-llm-server.js";
import { claudeRunner } from "../bench/peers.js";

const ROOT = resolve(import.meta.dirname, "../..");
const dirs: string[] = [];
after(() => dirs.forEach(removeTempDir));

/** Runs the link section of the bench with `pathPrefix` before PATH; returns its latest.json and stdout. */
async function benchLink(pathPrefix?: string): Promise<{ json: any; stdout: string }> {
  const out = makeTempDir("keen-bench-peers-");
  dirs.push(out);
  // A `claude` or `codex` already on this machine's PATH would change what is asserted.
  const path = [pathPrefix, process.env.PATH].filter(Boolean).join(delimiter);
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "test/bench/bench.ts"], {
    cwd: ROOT,
    env: { ...process.env, PATH: path, BENCH_ONLY: "link", BENCH_RUNS: "1", BENCH_DIR: out },
    maxBuffer: 16 * 1024 * 1024,
  });
  return { json: JSON.parse(readFileSync(join(out, "latest.json"), "utf8")), stdout };
}

test("a claude on PATH is run over the link and gets rows with numbers", { timeout: 300_000 }, async () => {
  const bin = makeTempDir("keen-bench-peers-bin-");
  dirs.push(bin);
  symlinkSync(resolve(ROOT, "test/fakes/fake-claude-link.mjs"), join(bin, "claude"));
  const { json, stdout } = await benchLink(bin);
  const claude = json.rows.filter((r: any) => r.floorName === "Claude Code (claude -p)");
  assert.deepEqual(claude.map((r: any) => r.name.replace(/^\d+ ms/, "")), [" link: spawn → first text-delta", " link: 1 turn, 200 deltas"]);
  for (const row of claude) {
    assert.ok(Number.isFinite(row.floor.median) && row.floor.median > 0, JSON.stringify(row));
    assert.equal(row.floor.n, 1);
    assert.equal(row.budget, undefined);
  }
  // First delta comes before the turn ends.
  assert.ok(claude[0].floor.median <= claude[1].floor.median);
  assert.match(stdout, /Claude Code \(claude -p\)/);
  assert.ok(!json.notes.some((n: string) => /not on this machine.*claude/.test(n)), json.notes.join("\n"));
});

test("a claude that fails gives its stderr's last line as the reason for no row, not a figure", async () => {
  const bin = makeTempDir("keen-bench-peers-bin-");
  dirs.push(bin);
  const failing = join(bin, "claude");
  writeFileSync(failing, "#!/bin/sh\necho 'starting' >&2\necho 'Invalid API key: the end' >&2\nexit 1\n");
  chmodSync(failing, 0o755);
  const server = await startMockLLMServer();
  const runner = claudeRunner(server, { text: "hi" }, server.url, "/dev/null", bin, failing);
  try {
    const sample = await runner();
    assert.ok(Number.isNaN(sample.wallMs), "no figure from a failed run");
    assert.equal(runner.failure(), "Invalid API key: the end");
  } finally {
    runner.dispose();
    await server.close();
  }
});
