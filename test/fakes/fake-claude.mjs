#!/usr/bin/env node
// A stand-in for `claude -p --output-format stream-json`: replays recorded
// fixtures (test/fixtures/claude-stream-json/) and records its argv, stdin and
// pid. FAKE_CLAUDE_LOG: file to append one JSON line per run to.
// FAKE_CLAUDE_SCRIPTS: comma list of `fixture[:exit code]`, the n-th run plays
// the n-th (the last repeats). `hang` prints init, starts a grandchild and waits.
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const fixtures = join(dirname(fileURLToPath(import.meta.url)), "../fixtures/claude-stream-json");
const argv = process.argv.slice(2);
const log = process.env.FAKE_CLAUDE_LOG;
const runs = log && existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).length : 0;
const scripts = (process.env.FAKE_CLAUDE_SCRIPTS ?? "text-thinking").split(",");
const [name, exit] = scripts[Math.min(runs, scripts.length - 1)].split(":");
const flag = (f) => (argv.includes(f) ? argv[argv.indexOf(f) + 1] : undefined);

let stdin = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (stdin += d));
process.stdin.on("end", () => {
  const record = { argv, stdin, pid: process.pid, cwd: process.cwd() };
  const lines = readFileSync(join(fixtures, `${name}.jsonl`), "utf8").split("\n").filter((l) => l !== "");
  const recorded = JSON.parse(lines[0]).session_id;
  const id = flag("--resume") ?? flag("--session-id") ?? recorded;
  if (process.env.FAKE_CLAUDE_STDERR) process.stderr.write(process.env.FAKE_CLAUDE_STDERR);
  if (name === "hang") {
    const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    record.grandchild = child.pid;
  }
  if (log) appendFileSync(log, JSON.stringify(record) + "\n");
  for (const line of lines) process.stdout.write(line.replaceAll(recorded, id) + "\n");
  if (name === "hang") return void setInterval(() => {}, 1000);
  process.exitCode = Number(exit ?? 0);
});
