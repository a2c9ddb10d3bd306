import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox, type InProcessRun } from "./in-process.js";

// A broken store, command by command, in this process (test/cli/in-process.ts): one line on stderr
// naming the path and the cause, exit 1. test/e2e/run-store-failures.test.ts keeps a spawned case
// of each kind (and the read-only and full disks, which need a mount).

const server = useMockLLMServer();

/** One line on stderr matching `line`, nothing on stdout, exit 1, no stack trace. */
function assertOneLine(r: InProcessRun, line: RegExp, what: string) {
  assert.equal(r.code, 1, `${what}: exit ${r.code}, stderr ${r.stderr}`);
  assert.equal(r.stdout, "", `${what}: stdout`);
  assert.match(r.stderr, line, what);
  assert.equal(r.stderr.split("\n").length, 2, `${what}: one line: ${r.stderr}`);
  assert.doesNotMatch(r.stderr, /\n\s+at |internal error/, `${what}: no stack trace`);
}

test("a file where the session directory belongs: the run stops before its first request; every command names the path", async () => {
  const sb = makeInProcessSandbox(server);
  const sessions = join(sb.home, "sessions");
  writeFileSync(sessions, "not a directory");
  server.enqueue({ text: "never requested" });
  const r = await sb.keen(["run", "--format", "json", "--no-stdin", "--sandbox", "off", "hi"]);
  assert.equal(r.code, 1, r.stderr);
  const result = JSON.parse(r.stdout);
  const message = `cannot write the session store at ${join(sessions, result.session_id)}: ${sessions} is not a directory (a file is in its place)`;
  assert.deepEqual([result.status, result.is_error, result.errors], ["error", true, [message]]);
  assert.equal(r.stderr, `keen: error: ${message}\n`);
  assert.equal(server.requests.length, 0, "no model request before the session could be written");

  const [meta] = await sb.sessions();
  assert.deepEqual([meta!.id, meta!.status], [result.session_id, "error"]);
  const read = new RegExp(`^keen: cannot read the session store at ${join(sessions, meta!.id)}: ${sessions} is not a directory \\(a file is in its place\\)\\n$`);
  assertOneLine(await sb.keen(["sessions", "show", meta!.id]), read, "sessions show");
  assertOneLine(await sb.keen(["sessions", "show", meta!.id, "--jsonl"]), read, "sessions show --jsonl");
  assertOneLine(await sb.keen(["run", "--session", meta!.id, "--no-stdin", "--sandbox", "off", "again"]), read, "run --session");
  assertOneLine(await sb.keen(["sessions", "rm", meta!.id]), /^keen: cannot write the session store at .*: .*not a directory/, "sessions rm");
  assert.equal(server.requests.length, 0);
});

test("a file where the data directory belongs: every command gives one line naming it, exit 1", async () => {
  const sb = makeInProcessSandbox(server);
  const data = join(sb.root, "xdg-data");
  mkdirSync(data);
  writeFileSync(join(data, "keen"), "not a directory");
  const env = { KEEN_HOME: undefined, XDG_DATA_HOME: data, XDG_CONFIG_HOME: join(sb.root, "xdg-config") };
  const line = (verb: string) => new RegExp(`^keen: cannot ${verb} the session store at ${join(data, "keen", "index")}: ${join(data, "keen")} is not a directory \\(a file is in its place\\)\\n$`);
  assertOneLine(await sb.keen(["run", "--no-stdin", "--sandbox", "off", "hi"], { env }), line("write"), "run");
  assertOneLine(await sb.keen(["run", "--format", "json", "--no-stdin", "--sandbox", "off", "hi"], { env }), line("write"), "run --format json");
  assertOneLine(await sb.keen(["run", "-c", "--no-stdin", "--sandbox", "off", "hi"], { env }), line("read"), "run -c");
  assertOneLine(await sb.keen(["sessions", "list"], { env }), line("read"), "sessions list");
  assertOneLine(await sb.keen(["sessions", "list", "--json"], { env }), line("read"), "sessions list --json");
  assertOneLine(await sb.keen(["sessions", "show", "01a2"], { env }), line("read"), "sessions show");
  assertOneLine(await sb.keen(["sessions", "rm", "01a2"], { env }), line("read"), "sessions rm");
  assertOneLine(await sb.keen(["sessions", "prune", "--older-than", "1d"], { env }), line("read"), "sessions prune");
  assert.equal(server.requests.length, 0);
});

test("a damaged session database: clear error for it, the other sessions still listed and usable", async () => {
  const sb = makeInProcessSandbox(server);
  server.enqueue({ text: "one" }, { text: "two" });
  const damaged = (await sb.runJson(["first"])).session_id;
  const fine = (await sb.runJson(["second"])).session_id;
  const dir = join(sb.home, "sessions", damaged);
  for (const name of readdirSync(dir)) writeFileSync(join(dir, name), "garbage ".repeat(64));
  const line = new RegExp(`^keen: cannot read the session store at ${dir}: the database is damaged \\(Corruption: [^\\n]+\\)\\n$`);
  assertOneLine(await sb.keen(["sessions", "show", damaged]), line, "sessions show");
  assertOneLine(await sb.keen(["sessions", "show", damaged, "--json"]), line, "sessions show --json");
  assertOneLine(await sb.keen(["run", "--session", damaged, "--no-stdin", "--sandbox", "off", "more"]), line, "run --session");
  assert.equal(server.requests.length, 2, "no request for the damaged session");
  const listed = await sb.keen(["sessions", "list", "--json"]);
  assert.equal(listed.code, 0, listed.stderr);
  assert.deepEqual(JSON.parse(listed.stdout).map((s: { id: string }) => s.id).sort(), [damaged, fine].sort());
  const shown = await sb.keen(["sessions", "show", fine, "--json"]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.equal(JSON.parse(shown.stdout).events.filter((e: { kind: string }) => e.kind === "text").at(-1).content, "two");
  server.enqueue({ text: "three" });
  assert.equal((await sb.runJson(["--session", fine, "more"])).text, "three", "the other session resumes");
  const rm = await sb.keen(["sessions", "rm", damaged]);
  assert.deepEqual(rm, { code: 0, stdout: "", stderr: `keen: removed session ${damaged}\n` });
  assert.deepEqual((await sb.sessions()).map((s) => s.id), [fine]);
});
