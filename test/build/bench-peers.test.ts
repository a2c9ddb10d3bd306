/**
 * The link bench's peer rows (test/bench/peers.ts) without the real CLIs: a
 * fake `claude` (test/fakes/fake-claude-link.mjs, a real streaming request over
 * the bench's TLS link) on PATH gives the Claude Code rows with numbers; a failing one a note. BENCH_RUNS=1,
 * link rows only, output in a temp BENCH_DIR. (The note for a peer that is absent is every
 * bench run's on this machine; a third bench run here, ~5 s of CPU, would only repeat it.)
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmodSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { promisify } from "node:util";
import { after, test } from "node:test";
import { makeTempDir, removeTempDir } from "../temp.js";

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

test("a claude that fails gives a note with its stderr's last line, no row, and the bench still reports", { timeout: 300_000 }, async () => {
  const bin = makeTempDir("keen-bench-peers-bin-");
  dirs.push(bin);
  writeFileSync(join(bin, "claude"), "#!/bin/sh\necho 'starting' >&2\necho 'Invalid API key: the end' >&2\nexit 1\n");
  chmodSync(join(bin, "claude"), 0o755);
  const { json } = await benchLink(bin);
  assert.ok(!json.rows.some((r: any) => r.floorName === "Claude Code (claude -p)"));
  assert.ok(json.rows.some((r: any) => /link: spawn → first text-delta/.test(r.name) && r.floorName === "fetch script"));
  assert.ok(json.notes.includes("claude on PATH failed, so no row: Invalid API key: the end"), json.notes.join("\n"));
});
