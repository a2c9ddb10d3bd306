/**
 * Issue 10, item 5: no input can crash or stall `keen run`. The model's hands
 * are scripted tool calls: a tool input nested 100,000 arrays deep, a regex
 * that backtracks catastrophically on a file in the workspace. Each run goes
 * through bin/keen (the bundle started from its V8 snapshot) and one through
 * the bundle as a plain script, since the search worker is a side bundle
 * (the OpenAI side of the deep input runs in process: test/cli/hostile-input.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { findRipgrep } from "../../app/tools/grep.js";
import { makeSandbox, parseLines, waitForStdout } from "./harness.js";
import { checkDeepInputRefused, deepInput } from "../cli/hostile-input-checks.js";

const server = useMockLLMServer();

const DEPTH = 100_000;
const BACKTRACKS = "(a+)+$";
/**
 * The budget the budget test sets through the user config (`search.budgetMs`, docs/config.md):
 * the JS engine's regex spins a core until the budget stops it, so 1 s, not the default 10.
 */
const SHORT_BUDGET_S = 1;

type Sandbox = ReturnType<typeof makeSandbox>;

/** A sandbox whose workspace holds a line that makes BACKTRACKS run for ever, and a PATH with node but no rg. */
function backtrackSandbox(config: Record<string, unknown> = {}): Sandbox & { path: string } {
  const sb = makeSandbox(server.url, config);
  writeFileSync(join(sb.workspace, "long.txt"), `${"a".repeat(5000)}!\n`);
  const bin = join(sb.root, "path-bin");
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, "node"));
  return { ...sb, path: bin };
}

/** A stand-in rg in `dir` that never finishes and writes its pid to `dir/rg.pid`. */
function fakeRipgrep(dir: string): string {
  const sleep = execFileSync("sh", ["-c", "command -v sleep"], { encoding: "utf8" }).trim();
  writeFileSync(join(dir, "rg"), `#!/bin/sh\necho $$ > ${join(dir, "rg.pid")}\nexec ${sleep} 600\n`);
  chmodSync(join(dir, "rg"), 0o755);
  return join(dir, "rg.pid");
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// The OpenAI side runs in process: test/cli/hostile-input.test.ts. The call is refused before it
// runs, so no tool runs and the sandbox plays no role: off, so that it does not warm up (~0.25 s of CPU per run).
test(`a tool input nested ${DEPTH} deep (anthropic): a clear tool error, no crash, the session stored and resumable`, async () => {
  const sb = makeSandbox(server.url, { sandbox: { mode: "off" } });
  server.enqueue({ toolCalls: [{ name: "grep", rawArguments: deepInput(DEPTH) }], chunkSize: 50_000 }, { text: "noted" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "search"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  const session = checkDeepInputRefused(r.stdout, server.requests);
  const { events } = await sb.show(session);
  assert.deepEqual(events.filter((e) => e.kind === "tool-result").map((e) => e.is_error), [true]);
  server.enqueue({ text: "again" });
  const again = await sb.run(["run", "--session", session, "--no-stdin", "more"]);
  assert.deepEqual([again.code, again.stdout], [0, "again\n"], again.stderr);
});

test(`a backtracking regex (JS engine, rg not on PATH) ends on grep's budget (${SHORT_BUDGET_S}s from the config) and the run goes on`, async () => {
  const sb = backtrackSandbox({ search: { budgetMs: SHORT_BUDGET_S * 1000 } });
  server.enqueue({ toolCalls: [{ name: "grep", input: { pattern: BACKTRACKS } }] }, { text: "gave up on that pattern" });
  const started = Date.now();
  const r = await sb.run(["run", "--headless", "--no-stdin", "--timeout", "60", "search"], { env: { PATH: sb.path }, timeoutMs: 120_000 });
  const ms = Date.now() - started;
  assert.equal(r.code, 0, r.stderr);
  const result = parseLines(r.stdout).find((l) => l.kind === "tool-result")!;
  assert.equal(result.is_error, true);
  assert.match(result.result, new RegExp(`^grep stopped after ${SHORT_BUDGET_S}s, its time budget: the pattern may backtrack catastrophically`));
  assert.equal(result.details.engine, "js");
  // A lower bound only: load can slow a run, never speed it. The message above is the budget's own.
  assert.ok(ms >= SHORT_BUDGET_S * 1000, `the run took ${ms} ms`);
  assert.equal(parseLines(r.stdout).at(-1)!.text, "gave up on that pattern");
});

const rg = findRipgrep();
test("with ripgrep installed, the same pattern runs without backtracking", { skip: rg ? false : "rg is not on PATH (apt-get install ripgrep)" }, async () => {
  const sb = backtrackSandbox();
  symlinkSync(rg!, join(sb.path, "rg"));
  server.enqueue({ toolCalls: [{ name: "grep", input: { pattern: BACKTRACKS } }] }, { text: "nothing there" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "search"], { env: { PATH: sb.path } });
  assert.equal(r.code, 0, r.stderr);
  const result = parseLines(r.stdout).find((l) => l.kind === "tool-result")!;
  // Not the budget's message: rg answered within it.
  assert.deepEqual([result.result, result.is_error, result.details.engine], ["No matches found.", false, "rg"]);
});

/**
 * Starts a grep on BACKTRACKS and sends SIGINT once the tool runs. The search never ends by
 * itself and its budget is the default 10 s (app/tools/search-runner.ts): a stored "interrupted" result (not the budget's message)
 * shows SIGINT ended it, whatever the load.
 */
async function interruptGrep(sb: Sandbox, env: Record<string, string>, started: () => boolean = () => true) {
  server.enqueue({ toolCalls: [{ name: "grep", input: { pattern: BACKTRACKS } }] });
  const r = await sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", "search"], {
    env,
    onSpawn: (child) =>
      void waitForStdout(child, (out) => out.includes('"tool-start"')).then(async () => {
        while (!started() && child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 20));
        child.kill("SIGINT");
      }, () => {}),
  });
  return { r };
}

test("SIGINT during a backtracking JS grep ends the run promptly (exit 130), the search stopped and stored", async () => {
  const sb = backtrackSandbox();
  const { r } = await interruptGrep(sb, { PATH: sb.path });
  assert.equal(r.code, 130, r.stderr);
  const [meta] = await sb.sessions();
  const { events } = await sb.show(meta!.id);
  const result = events.find((e) => e.kind === "tool-result")!;
  assert.deepEqual([result.result, result.is_error, result.details.engine], ["The search was interrupted.", true, "js"]);
  assert.equal(meta!.status, "interrupted");
});

test("SIGINT during a ripgrep call that does not finish kills rg and ends the run promptly", async () => {
  const sb = backtrackSandbox();
  const pidFile = fakeRipgrep(sb.path);
  const { r } = await interruptGrep(sb, { PATH: sb.path }, () => existsSync(pidFile) && readFileSync(pidFile, "utf8") !== "");
  assert.equal(r.code, 130, r.stderr);
  assert.equal(alive(Number(readFileSync(pidFile, "utf8"))), false, "rg was killed");
  const [meta] = await sb.sessions();
  const result = (await sb.show(meta!.id)).events.find((e) => e.kind === "tool-result")!;
  assert.deepEqual([result.result, result.details.engine], ["The search was interrupted.", "rg"]);
});

test("--timeout ends a run stuck in a backtracking grep on time, also when the bundle runs as a plain script", async () => {
  const sb = backtrackSandbox();
  // Without the snapshot: the search worker is found beside dist/keen.cjs either way.
  const plain = join(sb.root, "keen-plain");
  writeFileSync(plain, `#!/bin/sh\nexec node ${resolve(import.meta.dirname, "../../dist/keen.cjs")} "$@"\n`);
  chmodSync(plain, 0o755);
  for (const bin of [undefined, plain]) {
    // The timeout counts from Keen's start: on a loaded machine it can end the run before the
    // grep even starts (no result yet, or "Not executed"), which shows nothing about a stuck search. Then the same
    // run again with twice the timeout, all below grep's own 10 s budget.
    let results: string[] = [];
    for (const timeout of [2, 4, 8]) {
      server.reset();
      server.enqueue({ toolCalls: [{ name: "grep", input: { pattern: BACKTRACKS } }] });
      // --sandbox off: this PATH hides rg on purpose (the JS search), and auto would say the sandbox needs it.
      const r = await sb.run(["run", "--format", "json", "--no-stdin", "--timeout", String(timeout), "--sandbox", "off", "search"], { env: { PATH: sb.path }, bin });
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stderr, `keen: error: timed out after ${timeout}.0s\n`);
      const { status, session_id } = JSON.parse(r.stdout);
      assert.equal(status, "error");
      results = (await sb.show(session_id)).events.filter((e) => e.kind === "tool-result").map((e) => e.result);
      if (results.length > 0 && results[0] !== "Not executed: the run was interrupted.") break;
    }
    // The timeout stopped the search, before its own 10 s budget could (no duration measured: load only slows).
    assert.deepEqual(results, ["The search was interrupted."], `${bin ?? "bin/keen"}`);
  }
});
