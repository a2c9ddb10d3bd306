import { test } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, waitForStdout, type KeenRun } from "./harness.js";

const server = useMockLLMServer();

type Sandbox = ReturnType<typeof makeSandbox>;

/** Starts `keen run --headless --stream-deltas` on a reply that stalls, and resolves once it streams. */
async function holdSession(sb: Sandbox, args: string[]): Promise<{ child: ChildProcess; done: Promise<KeenRun> }> {
  server.enqueue({ text: "streaming then silence", stallAfterChunks: 4 });
  let child!: ChildProcess;
  let streaming!: Promise<string>;
  const done = sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", ...args], {
    onSpawn: (c) => {
      child = c;
      streaming = waitForStdout(c, (out) => out.includes('"text-delta"'));
    },
  });
  await streaming;
  return { child, done };
}

test("8 parallel `keen run` on one store, each its own session, while `sessions list` runs alongside", async () => {
  const sb = makeSandbox(server.url);
  for (let i = 0; i < 8; i++) server.enqueue({ text: "parallel answer", delayMs: 5 });
  let running = true;
  const listings: Promise<KeenRun[]> = (async () => {
    const seen: KeenRun[] = [];
    while (running) seen.push(await sb.run(["sessions", "list", "--json"]));
    return seen;
  })();
  const runs = await Promise.all(
    Array.from({ length: 8 }, (_, i) => sb.run(["run", "--format", "json", "--no-stdin", `task ${i}`], { timeoutMs: 60_000 })),
  ).finally(() => (running = false));
  for (const r of runs) {
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, "");
    assert.equal(JSON.parse(r.stdout).text, "parallel answer");
  }
  for (const l of await listings) {
    assert.deepEqual([l.code, l.stderr], [0, ""]);
    assert.ok(Array.isArray(JSON.parse(l.stdout)));
  }
  const ids = runs.map((r) => JSON.parse(r.stdout).session_id);
  assert.equal(new Set(ids).size, 8);
  const sessions = await sb.sessions();
  // The harness reads the store in-process; the command prints the same, with short ids.
  const listed = await sb.run(["sessions", "list", "--all", "--json"]);
  assert.deepEqual([listed.code, listed.stderr], [0, ""]);
  assert.deepEqual(JSON.parse(listed.stdout).map(({ short_id, ...s }: Record<string, unknown>) => (assert.equal(typeof short_id, "string"), s)), sessions);
  assert.deepEqual(
    sessions.map((s) => [s.id, s.title, s.status]).sort(),
    ids.map((id, i) => [id, `task ${i}`, "success"]).sort(),
  );
  for (const [i, id] of ids.entries()) {
    const { events } = await sb.show(id);
    assert.deepEqual(
      events.filter((e) => e.kind === "text").map((e) => [e.role, e.content]),
      [["user", `task ${i}`], ["assistant", "parallel answer"]],
    );
  }
  assert.deepEqual(server.unexpected, []);
  assert.equal(server.pending(), 0);
});

test("a second process on a busy session fails fast; reading and listing it while written work", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ text: "first" });
  const first = await sb.run(["run", "--format", "json", "--no-stdin", "start"]);
  const id = JSON.parse(first.stdout).session_id;

  const holder = await holdSession(sb, ["--session", id, "hold it"]);
  const second = await sb.run(["run", "--format", "json", "--no-stdin", "--session", id, "me too"]);
  assert.deepEqual(second, { code: 1, signal: null, stdout: "", stderr: `keen: session ${id} is busy\n` });

  const shown = await sb.show(id.slice(0, 12));
  assert.deepEqual(shown.session.status, "running");
  const json = await sb.run(["sessions", "show", id.slice(0, 12), "--json"]);
  assert.deepEqual([json.code, json.stderr, JSON.parse(json.stdout)], [0, "", shown], "the command prints what the harness read");
  assert.deepEqual(
    shown.events.filter((e) => e.kind === "text").map((e) => e.content),
    ["start", "first", "hold it"],
  );
  const text = await sb.run(["sessions", "show", id]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`^${id}  .*  running  .*\\nstart\\n\\n> start\\n\\nfirst\\n\\n> hold it\\n\\n$`));
  const removing = await sb.run(["sessions", "rm", id]);
  assert.deepEqual(removing, { code: 1, signal: null, stdout: "", stderr: `keen: session ${id} is busy; not removed\n` });

  holder.child.kill("SIGINT");
  assert.equal((await holder.done).code, 130);
  server.enqueue({ text: "free again" });
  const third = await sb.run(["run", "--no-stdin", "--session", id, "now?"]);
  assert.deepEqual({ code: third.code, stdout: third.stdout }, { code: 0, stdout: "free again\n" });
  assert.deepEqual(server.unexpected, []);
});

test("sessions list: a header, aligned columns, this directory unless --all; rm takes several ids; prune with a dry run", async () => {
  const sb = makeSandbox(server.url);
  const empty = await sb.run(["sessions"]);
  assert.deepEqual({ code: empty.code, stdout: empty.stdout }, { code: 0, stdout: "" });
  assert.match(empty.stderr, /^keen: no sessions in .* yet\n$/);
  server.enqueue({ text: "a" }, { text: "b" }, { kind: "http-error", status: 400 }, { text: "elsewhere" });
  const a = JSON.parse((await sb.run(["run", "--format", "json", "--no-stdin", "alpha"])).stdout).session_id;
  const b = JSON.parse((await sb.run(["run", "--format", "json", "--no-stdin", "beta\nsecond line"])).stdout).session_id;
  const c = JSON.parse((await sb.run(["run", "--format", "json", "--no-stdin", "gamma"])).stdout).session_id;
  const d = JSON.parse((await sb.run(["run", "--format", "json", "--no-stdin", "--cwd", sb.root, "delta"])).stdout).session_id;

  const listed = await sb.run(["sessions"]);
  assert.equal(listed.code, 0, listed.stderr);
  const rows = listed.stdout.split("\n").filter(Boolean);
  assert.equal(rows.length, 4, listed.stdout);
  assert.match(rows[0]!, /^ID +UPDATED +STATUS +MODEL +CWD +TITLE$/);
  const short = (JSON.parse((await sb.run(["sessions", "list", "--all", "--json"])).stdout) as { short_id: string }[]).map((s) => s.short_id);
  for (const id of short) assert.ok(id.length >= 8 && short.filter((o) => o.startsWith(id)).length === 1);
  const at = rows[0]!.indexOf("TITLE");
  assert.deepEqual(rows.slice(1).map((r) => r.slice(at)), ["gamma", "beta", "alpha"]);
  assert.deepEqual(rows.slice(1).map((r) => r.split(/ {2,}/)[2]), ["error", "success", "success"]);
  assert.ok(rows.slice(1).every((r) => r.includes(`  ${sb.workspace}  `)));
  const shortOf = (id: string) => short.find((s) => id.startsWith(s))!;
  assert.ok(rows[1]!.startsWith(`${shortOf(c)} `));
  const run = await sb.run(["run", "--no-stdin", "-s", shortOf(a), "again"]);
  assert.equal(run.code, 1, "the short id resolves (the queue is empty, so the run fails)");

  assert.equal((await sb.run(["sessions", "list", "--all"])).stdout.split("\n").filter(Boolean).length, 5);
  assert.equal((await sb.run(["sessions", "list", "--cwd", sb.root])).stdout.split("\n").filter(Boolean).length, 2);
  assert.equal((await sb.run(["sessions", "list", "--limit", "1"])).stdout.split("\n").filter(Boolean).length, 2);
  assert.equal(JSON.parse((await sb.run(["sessions", "list", "--json", "--limit", "2"])).stdout).length, 2);
  for (const bad of [["--limit", "0"], ["--all", "--cwd", "/"]]) assert.equal((await sb.run(["sessions", "list", ...bad])).code, 2);

  const none = await sb.run(["sessions", "prune", "--older-than", "1h"]);
  assert.deepEqual({ code: none.code, stderr: none.stderr }, { code: 0, stderr: "keen: pruned 0 sessions\n" });
  const dry = await sb.run(["sessions", "prune", "--older-than", "0s", "--status", "error", "--dry-run"]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.deepEqual(dry.stdout.split("\n").filter(Boolean).map((l) => l.split("  ")[0]).sort(), [a, c].sort());
  assert.equal(dry.stderr, "keen: would remove 2 sessions (dry run)\n");
  assert.equal((await sb.sessions()).length, 4, "a dry run removes nothing");
  const pruned = await sb.run(["sessions", "prune", "--older-than", "0s", "--status", "error"]);
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.deepEqual((await sb.sessions()).map((s) => s.id).sort(), [b, d].sort());
  assert.equal((await sb.run(["sessions", "prune", "--older-than", "soon"])).code, 2);
  assert.equal((await sb.run(["sessions", "prune", "--older-than", "1d", "--status", "failed"])).code, 2);

  const rm = await sb.run(["sessions", "rm", b.slice(0, 13), d]);
  assert.deepEqual({ code: rm.code, stdout: rm.stdout, stderr: rm.stderr }, { code: 0, stdout: "", stderr: `keen: removed session ${b}\nkeen: removed session ${d}\n` });
  assert.deepEqual(await sb.sessions(), []);
  for (const args of [["sessions", "show", a], ["sessions", "rm", a], ["run", "--no-stdin", "--session", a, "x"]]) {
    const gone = await sb.run(args);
    assert.deepEqual(gone, { code: 2, signal: null, stdout: "", stderr: `keen: no session matches '${a}'\n` });
  }
});

test("two processes resuming one session at the same moment: exactly one wins the claim", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ text: "first" });
  const id = JSON.parse((await sb.run(["run", "--format", "json", "--no-stdin", "start"])).stdout).session_id;
  // One stalled reply: the winner holds the session until interrupted; the loser never reaches the server.
  server.enqueue({ text: "held", stallAfterChunks: 4 });
  const children: ChildProcess[] = [];
  const runs = [0, 1].map((i) =>
    sb.run(["run", "--format", "json", "--no-stdin", "--session", id, `racer ${i}`], { onSpawn: (c) => void children.push(c) }),
  );
  const loser = await Promise.race(runs);
  assert.deepEqual(loser, { code: 1, signal: null, stdout: "", stderr: `keen: session ${id} is busy\n` });
  while (server.requests.length < 2 && children.some((c) => c.exitCode === null)) await new Promise((r) => setTimeout(r, 20));
  for (const child of children) if (child.exitCode === null) child.kill("SIGINT");
  const [a, b] = await Promise.all(runs);
  assert.deepEqual([a!.code, b!.code].sort(), [1, 130]);
  assert.deepEqual([server.requests.length, server.pending(), server.unexpected], [2, 0, []]);
});

test("without KEEN_HOME, config and data follow XDG_CONFIG_HOME and XDG_DATA_HOME", async () => {
  const sb = makeSandbox(server.url);
  const xdg = { KEEN_HOME: undefined, XDG_CONFIG_HOME: join(sb.root, "cfg"), XDG_DATA_HOME: join(sb.root, "data") };
  mkdirSync(join(sb.root, "cfg", "keen"), { recursive: true });
  writeFileSync(join(sb.root, "cfg", "keen", "config.json"), JSON.stringify({ model: "anthropic/claude-haiku-4-5" }));
  server.enqueue({ text: "xdg" });
  const r = await sb.run(["run", "--no-stdin", "where"], { env: xdg });
  assert.deepEqual({ code: r.code, stdout: r.stdout }, { code: 0, stdout: "xdg\n" }, r.stderr);
  assert.equal(server.requests[0]!.body.model, "claude-haiku-4-5");
  assert.ok(existsSync(join(sb.root, "data", "keen")));
  const listed = JSON.parse((await sb.run(["sessions", "list", "--json"], { env: xdg })).stdout);
  assert.deepEqual(listed.map((s: { title: string }) => s.title), ["where"]);
  assert.deepEqual(await sb.sessions(), [], "nothing under KEEN_HOME");
});

test("sessions show: thinking, partial text of a failed, an interrupted and a killed turn with their markers; --json --jsonl is a usage error", async () => {
  const sb = makeSandbox(server.url, { retry: { maxRetries: 0, baseDelayMs: 10 } });
  server.enqueue(
    { thinking: "weigh it\nline two\nline three\nline four", text: "Thought answer." },
    { text: "half of the answer then", chunkSize: 5, errorAfterChunks: 6, errorType: "invalid_request_error" },
  );
  const first = await sb.run(["run", "--no-stdin", "think"]);
  assert.equal(first.code, 0, first.stderr);
  const id = (await sb.sessions())[0]!.id;
  const failed = await sb.run(["run", "--no-stdin", "-c", "fail"]);
  assert.equal(failed.code, 1);
  // A turn killed with SIGKILL mid-stream leaves no turn-end.
  server.enqueue({ text: "streaming then silence", stallAfterChunks: 4 });
  const killed = await sb.run(["run", "--headless", "--stream-deltas", "--no-stdin", "-c", "die"], {
    onSpawn: (child) => void waitForStdout(child, (out) => out.includes('"text-delta"')).then(() => child.kill("SIGKILL"), () => {}),
  });
  assert.equal(killed.signal, "SIGKILL");
  const show = await sb.run(["sessions", "show", id.slice(0, 13)]);
  assert.equal(show.code, 0, show.stderr);
  const body = show.stdout.split("\n").slice(3).join("\n");
  assert.equal(body, [
    "> think", "",
    "[thinking] weigh it\nline two\nline three\n…", "",
    "Thought answer.", "",
    "> fail", "",
    "[error] invalid_request_error: Overloaded",
    "half of the ans [partial]", "",
    "[turn error]", "",
    "> die", "",
    "[turn interrupted]", "", "",
  ].join("\n"));
  assert.equal((await sb.sessions())[0]!.status, "interrupted");
  const both = await sb.run(["sessions", "show", id, "--json", "--jsonl"]);
  assert.deepEqual({ code: both.code, stdout: both.stdout, stderr: both.stderr }, { code: 2, stdout: "", stderr: "keen: --json and --jsonl are two formats: give one\n" });
});
