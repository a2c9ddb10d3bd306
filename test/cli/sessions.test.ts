import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../storage/level-store.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";

// `keen sessions list/prune/rm/show` decided in this process (test/cli/in-process.ts): the case
// table of what test/e2e/run-store.test.ts once spawned ~24 Keens for. The e2e file keeps the
// spawned table, rm and the gone-session usage error.

const server = useMockLLMServer();

test("sessions list: a header, aligned columns, this directory unless --all; rm takes several ids; prune with a dry run", async () => {
  const sb = makeInProcessSandbox(server);
  const empty = await sb.keen(["sessions"]);
  assert.deepEqual({ code: empty.code, stdout: empty.stdout }, { code: 0, stdout: "" });
  assert.match(empty.stderr, /^keen: no sessions in .* yet\n$/);
  server.enqueue({ text: "a" }, { text: "b" }, { kind: "http-error", status: 400 }, { text: "elsewhere" });
  const a = (await sb.runJson(["alpha"])).session_id;
  const b = (await sb.runJson(["beta\nsecond line"])).session_id;
  const failed = await sb.keen(["run", "--format", "json", "--no-stdin", "--sandbox", "off", "gamma"]);
  assert.equal(failed.code, 1, failed.stderr);
  const c = JSON.parse(failed.stdout).session_id;
  const d = (await sb.runJson(["--cwd", sb.root, "delta"])).session_id;

  const listed = await sb.keen(["sessions"]);
  assert.equal(listed.code, 0, listed.stderr);
  const rows = listed.stdout.split("\n").filter(Boolean);
  assert.equal(rows.length, 4, listed.stdout);
  assert.match(rows[0]!, /^ID +UPDATED +STATUS +MODEL +CWD +TITLE$/);
  const all = JSON.parse((await sb.keen(["sessions", "list", "--all", "--json"])).stdout) as Record<string, unknown>[];
  // The e2e harness reads the store as sb.sessions() does (test/e2e/harness.ts): the command prints the same, with short ids.
  assert.deepEqual(all.map(({ short_id: _, ...s }) => s), await sb.sessions());
  const short = all.map((s) => s.short_id as string);
  for (const id of short) assert.ok(id.length >= 8 && short.filter((o) => o.startsWith(id)).length === 1);
  const at = rows[0]!.indexOf("TITLE");
  assert.deepEqual(rows.slice(1).map((r) => r.slice(at)), ["gamma", "beta", "alpha"]);
  assert.deepEqual(rows.slice(1).map((r) => r.split(/ {2,}/)[2]), ["error", "success", "success"]);
  assert.ok(rows.slice(1).every((r) => r.includes(`  ${sb.workspace}  `)));
  const shortOf = (id: string) => short.find((s) => id.startsWith(s))!;
  assert.ok(rows[1]!.startsWith(`${shortOf(c)} `));
  // The short id resolves: the run reaches the model, whose 400 fails it (and marks the session error).
  server.enqueue({ kind: "http-error", status: 400 });
  const run = await sb.keen(["run", "--no-stdin", "--sandbox", "off", "-s", shortOf(a), "again"]);
  assert.equal(run.code, 1, run.stderr);
  assert.equal(server.requests.at(-1)!.body.messages[0].content[0].text, "alpha", "the run resumed session a");

  assert.equal((await sb.keen(["sessions", "list", "--all"])).stdout.split("\n").filter(Boolean).length, 5);
  assert.equal((await sb.keen(["sessions", "list", "--cwd", sb.root])).stdout.split("\n").filter(Boolean).length, 2);
  const limited = await sb.keen(["sessions", "list", "--limit", "1"]);
  assert.equal(limited.stdout.split("\n").filter(Boolean).length, 2);
  assert.equal(limited.stderr, "keen: 2 older not shown (--limit)\n");
  assert.equal(JSON.parse((await sb.keen(["sessions", "list", "--json", "--limit", "2"])).stdout).length, 2);
  for (const bad of [["--limit", "0"], ["--all", "--cwd", "/"]]) {
    const r = await sb.keen(["sessions", "list", ...bad]);
    assert.deepEqual([r.code, r.stdout], [2, ""], bad.join(" "));
    assert.match(r.stderr, /^keen: [^\n]+\n$/);
  }

  const none = await sb.keen(["sessions", "prune", "--older-than", "1h"]);
  assert.deepEqual({ code: none.code, stderr: none.stderr }, { code: 0, stderr: "keen: pruned 0 sessions\n" });
  const dry = await sb.keen(["sessions", "prune", "--older-than", "0s", "--status", "error", "--dry-run"]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.deepEqual(dry.stdout.split("\n").filter(Boolean).map((l) => l.split("  ")[0]).sort(), [a, c].sort());
  assert.equal(dry.stderr, "keen: would remove 2 sessions (dry run)\n");
  assert.equal((await sb.sessions()).length, 4, "a dry run removes nothing");
  const pruned = await sb.keen(["sessions", "prune", "--older-than", "0s", "--status", "error"]);
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.deepEqual((await sb.sessions()).map((s) => s.id).sort(), [b, d].sort());
  assert.equal((await sb.keen(["sessions", "prune", "--older-than", "soon"])).code, 2);
  assert.equal((await sb.keen(["sessions", "prune", "--older-than", "1d", "--status", "failed"])).code, 2);

  const rm = await sb.keen(["sessions", "rm", b.slice(0, 13), d]);
  assert.deepEqual(rm, { code: 0, stdout: "", stderr: `keen: removed session ${b}\nkeen: removed session ${d}\n` });
  assert.deepEqual(await sb.sessions(), []);
  for (const args of [["sessions", "show", a], ["sessions", "rm", a], ["run", "--no-stdin", "--session", a, "x"]]) {
    assert.deepEqual(await sb.keen(args), { code: 2, stdout: "", stderr: `keen: no session matches '${a}'\n` }, args.join(" "));
  }
  assert.deepEqual(server.unexpected, []);
});

test("sessions show: thinking cut to three lines, the partial text of a failed turn with its markers; --json prints the stored session and events; --json --jsonl is a usage error", async () => {
  const sb = makeInProcessSandbox(server, { retry: { maxRetries: 0, baseDelayMs: 10 } });
  server.enqueue(
    { thinking: "weigh it\nline two\nline three\nline four", text: "Thought answer." },
    { text: "half of the answer then", chunkSize: 5, errorAfterChunks: 6, errorType: "invalid_request_error" },
  );
  const id = (await sb.runJson(["think"])).session_id;
  const failed = await sb.keen(["run", "--no-stdin", "--sandbox", "off", "-c", "fail"]);
  assert.equal(failed.code, 1);
  const show = await sb.keen(["sessions", "show", id.slice(0, 13)]);
  assert.equal(show.code, 0, show.stderr);
  const [head, title, blank, ...body] = show.stdout.split("\n");
  assert.match(head!, new RegExp(`^${id}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  error  anthropic/claude-sonnet-5-5  ${sb.workspace}$`));
  assert.deepEqual([title, blank], ["think", ""]);
  assert.equal(body.join("\n"), [
    "> think", "",
    "[thinking] weigh it\nline two\nline three\n…", "",
    "Thought answer.", "",
    "> fail", "",
    "[error] invalid_request_error: Overloaded",
    "half of the ans [partial]", "",
    "[turn error]", "", "",
  ].join("\n"));
  // The e2e harness's show() reads the store so (test/e2e/harness.ts): the command prints the same.
  const json = await sb.keen(["sessions", "show", id.slice(0, 12), "--json"]);
  const store = openStore(sb.home);
  const session = await store.resolve(id.slice(0, 12));
  assert.deepEqual([json.code, json.stderr, JSON.parse(json.stdout)], [0, "", JSON.parse(JSON.stringify({ session, events: await store.load(session.id) }))]);
  const both = await sb.keen(["sessions", "show", id, "--json", "--jsonl"]);
  assert.deepEqual(both, { code: 2, stdout: "", stderr: "keen: --json and --jsonl are two formats: give one\n" });
});

test("without KEEN_HOME, config and data follow XDG_CONFIG_HOME and XDG_DATA_HOME", async () => {
  const sb = makeInProcessSandbox(server);
  const xdg = { KEEN_HOME: undefined, XDG_CONFIG_HOME: join(sb.root, "cfg"), XDG_DATA_HOME: join(sb.root, "data") };
  mkdirSync(join(sb.root, "cfg", "keen"), { recursive: true });
  writeFileSync(join(sb.root, "cfg", "keen", "config.json"), JSON.stringify({ model: "anthropic/claude-haiku-4-5" }));
  server.enqueue({ text: "xdg" });
  const r = await sb.keen(["run", "--no-stdin", "--sandbox", "off", "where"], { env: xdg });
  assert.deepEqual({ code: r.code, stdout: r.stdout }, { code: 0, stdout: "xdg\n" }, r.stderr);
  assert.equal(server.requests.at(-1)!.body.model, "claude-haiku-4-5");
  assert.ok(existsSync(join(sb.root, "data", "keen")));
  const listed = JSON.parse((await sb.keen(["sessions", "list", "--json"], { env: xdg })).stdout);
  assert.deepEqual(listed.map((s: { title: string }) => s.title), ["where"]);
  assert.deepEqual(await sb.sessions(), [], "nothing under KEEN_HOME");
});
