/**
 * Issue 10, item 6 and the stdin part of item 5: a closing terminal (SIGHUP),
 * an impatient second SIGINT, and a prompt pipe that never closes.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines, waitForStdout } from "./harness.js";

const server = useMockLLMServer();

/** True once the bash command has printed "started" (a tool-update line): the tool is running. */
const running = (out: string) => /"tool-update".*started/.test(out);

/** The processes still matching `marker` once they are gone, or after 20 s (generous for a loaded machine: it costs time only when something survives; a killed process leaves /proc when reaped, not when signalled). */
async function gone(marker: string): Promise<string[]> {
  for (const end = Date.now() + 20_000; processesWith(marker).length && Date.now() < end;) await new Promise((r) => setTimeout(r, 10));
  return processesWith(marker);
}

/** Pids of processes whose command line contains `marker`. */
function processesWith(marker: string): string[] {
  return readdirSync("/proc").filter((pid) => {
    try {
      return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
    } catch {
      return false;
    }
  });
}

test("SIGHUP during a bash tool call: exit 129, the process group killed, the turn stored interrupted, the result line written", async () => {
  const sb = makeSandbox(server.url);
  const marker = "27.1828";
  // A child of the command in its own background job: only a kill of the whole group reaches it.
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: `echo started; sleep ${marker} & sleep ${marker}; echo finished` } }] });
  const r = await sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", "wait"], {
    onSpawn: (child) => void waitForStdout(child, running).then(() => child.kill("SIGHUP"), () => {}),
  });
  assert.equal(r.code, 129, r.stderr);
  assert.equal(r.stderr, "");
  assert.deepEqual(await gone(marker), [], "every process of the command was killed");
  const result = parseLines(r.stdout).at(-1)!;
  assert.deepEqual([result.kind, result.status, result.is_error], ["result", "interrupted", true]);
  const [meta] = await sb.sessions();
  assert.equal(meta!.status, "interrupted");
  const { events } = await sb.show(meta!.id);
  const stored = events.find((e) => e.kind === "tool-result")!;
  assert.deepEqual([stored.is_error, stored.result.includes("finished")], [true, false]);
  assert.deepEqual(events.filter((e) => e.kind === "turn-end").map((e) => e.status), ["interrupted"]);
});

test("a second SIGINT ends at once, and the session is left resumable: stale claim, nothing corrupt", async () => {
  const sb = makeSandbox(server.url);
  const marker = "16.1803";
  // The command ignores SIGTERM, so the first SIGINT's abort waits for the group's SIGKILL grace: the second lands meanwhile.
  server.enqueue({ toolCalls: [{ name: "bash", input: { command: `trap '' TERM; echo started; sleep ${marker}; echo finished` } }] });
  let first = 0;
  let second = 0;
  // --sandbox off: sandboxed, the first SIGINT already ends everything (bwrap dies with its parent and takes
  // its PID namespace along), so a command that ignores SIGTERM exists only unconfined.
  const r = await sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", "--sandbox", "off", "wait"], {
    onSpawn: (child) =>
      void waitForStdout(child, running).then(() => {
        first = Date.now();
        child.kill("SIGINT");
        setTimeout(() => ((second = Date.now()), child.kill("SIGINT")), 150);
      }, () => {}),
  });
  const exitedAfter = Date.now() - second;
  assert.equal(r.code, 130, r.stderr);
  assert.ok(second > first && exitedAfter < 700, `exit ${exitedAfter} ms after the second SIGINT`);
  assert.ok(!r.stdout.includes('"kind":"result"'), "the second SIGINT did not wait for the turn to close");
  assert.deepEqual(await gone(marker), [], "the command's group was killed on exit");

  const [meta] = await sb.sessions();
  assert.equal(meta!.status, "interrupted", "a running session whose process is gone is listed interrupted");
  // The command through main() in this process (a Keen start less): what it prints is Keen's own; run-store,
  // headless-replay and terminal-output run it as a real process.
  const replay = await sb.main(["sessions", "show", meta!.id, "--jsonl"]);
  assert.equal(replay.code, 0, replay.stderr);
  assert.deepEqual(parseLines(replay.stdout).map((l) => l.kind), ["text", "tool-use"]);

  server.enqueue({ text: "picked up again" });
  const resumed = await sb.run(["run", "--session", meta!.id, "--format", "json", "--no-stdin", "go on"]);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.equal(JSON.parse(resumed.stdout).text, "picked up again");
  const sent = server.requests.at(-1)!.body.messages;
  assert.deepEqual(sent.map((m: { role: string }) => m.role), ["user", "assistant", "user"]);
  assert.match(JSON.stringify(sent[1]), /\[turn interrupted\]/);
  assert.equal((await sb.sessions())[0]!.status, "success");
});

test("--timeout bounds waiting for the prompt on stdin: exit 1, one line, no session, no request", async () => {
  const sb = makeSandbox(server.url);
  const started = Date.now();
  const silent = await sb.run(["run", "--timeout", "1"], { stdin: "open" });
  const ms = Date.now() - started;
  assert.deepEqual({ code: silent.code, stdout: silent.stdout }, { code: 1, stdout: "" });
  assert.equal(silent.stderr, "keen: timed out after 1.0s waiting for the prompt on stdin (--timeout; use --no-stdin to skip it)\n");
  assert.ok(ms < 5000, `took ${ms} ms`);

  // With args, a pipe that sends a little and never closes is bounded the same way (the grace period covers only the first byte).
  const trickle = await sb.run(["run", "--timeout", "1", "summarize"], {
    stdin: "open",
    onSpawn: (child) => child.stdin!.write("the first line\n"),
  });
  assert.deepEqual({ code: trickle.code, stdout: trickle.stdout }, { code: 1, stdout: "" });
  assert.match(trickle.stderr, /^keen: timed out after 1\.0s waiting for the prompt on stdin/);
  assert.deepEqual(await sb.sessions(), []);
  assert.equal(server.requests.length, 0);
});

test("--timeout counts the time spent reading stdin: the run gets what is left", async () => {
  // stdin ends 2 s in, the budget is 5 s: counted from the start the run ends at ~5 s, counted from
  // stdin's end it would end at 7 s or later. The 2 s between those leave room for a loaded machine,
  // as do the 3 s the request has to leave in after stdin ended.
  const sb = makeSandbox(server.url, { stdinGraceMs: 10_000 });
  server.enqueue({ text: "slow", stallAfterChunks: 3 });
  const r = await sb.run(["run", "--format", "json", "--timeout", "5", "hi"], {
    stdin: "open",
    onSpawn: (child) => setTimeout(() => child.stdin!.end("late data\n"), 2000),
  });
  assert.equal(r.code, 1, r.stderr);
  const result = JSON.parse(r.stdout);
  assert.equal(result.errors.at(-1), "timed out after 5.0s");
  assert.ok(result.duration_ms >= 4900 && result.duration_ms < 7000, `duration ${result.duration_ms} ms`);
  assert.ok(server.requests[0], "the request left before the budget ran out");
  assert.match(server.requests[0]!.body.messages[0].content[0].text, /^hi\nlate data$/);
});
