import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";

// Usage errors every front end shares (test/cli/session-flags.test.ts validates the flags
// themselves), through the same main() the bundle runs, in this process. The e2e files keep one
// spawned usage error each for the real process's exit code and stderr (sandbox.test.ts: --sandbox
// on without bwrap; cli-runner.test.ts: a missing claude binary).

const server = useMockLLMServer();

test("a bad --sandbox or --runner is a one-line usage error of keen run, the TUI, acp and stdio, before any session", async () => {
  const sb = makeInProcessSandbox(server);
  const fronts = [["run"], [], ["acp"], ["stdio"]];
  const bad: [string[], string][] = [
    [["--sandbox", "maybe"], 'keen: --sandbox must be on, off or auto, not "maybe"\n'],
    [["--runner", "sideways"], 'keen: --runner must be cli or embedded, not "sideways"\n'],
  ];
  for (const front of fronts) {
    for (const [flags, stderr] of bad) {
      const args = [...front, ...flags, ...(front[0] === "run" ? ["hi"] : [])];
      const r = await sb.keen(args);
      assert.deepEqual([r.code, r.stdout, r.stderr], [2, "", stderr], args.join(" "));
    }
  }
  assert.deepEqual(await sb.sessions(), []);
  assert.deepEqual(server.requests, []);
});

test("keen run --headless: bad flags and failures before the run are exit 2, one line on stderr, nothing on stdout, no session", async () => {
  const sb = makeInProcessSandbox(server);
  const cases: [string[], RegExp][] = [
    [["run", "--stream-deltas", "hi"], /--stream-deltas needs --headless/],
    [["run", "--headless", "--format", "json", "hi"], /--format/],
    [["run", "--headless", "--format", "text", "hi"], /--format/],
    [["run", "--headless", "--session", "0000dead", "hi"], /no session matches/],
    [["run", "--headless", "--no-stdin"], /empty prompt/],
    [["run", "--headless", "--timeout", "soon", "hi"], /--timeout/],
  ];
  for (const [args, message] of cases) {
    const r = await sb.keen(args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stdout, "", args.join(" "));
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
  }
  const bad = makeInProcessSandbox(server, { retry: { maxRetries: "many" } });
  const r = await bad.keen(["run", "--headless", "hi"]);
  assert.deepEqual([r.code, r.stdout], [2, ""], r.stderr);
  assert.match(r.stderr, /^keen: [^\n]*config\.json[^\n]*\n$/);
  assert.deepEqual(await sb.sessions(), []);
  assert.deepEqual(await bad.sessions(), []);
  assert.deepEqual(server.requests, []);
});

test("a project config cannot set the CLI runner (agents): a usage error naming the field, nothing run", async () => {
  const sb = makeInProcessSandbox(server);
  mkdirSync(join(sb.workspace, ".keen"));
  writeFileSync(join(sb.workspace, ".keen", "config.json"), JSON.stringify({ agents: { defaults: { cli: { enabled: true, path: "/bin/sh" } } } }));
  const r = await sb.keen(["run", "--no-stdin", "hi"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /"agents" is not allowed in a project config/);
  assert.deepEqual(await sb.sessions(), []);
  assert.deepEqual(server.requests, []);
});

test("what the CLI runner cannot do is a usage error before any session: --output-schema, --record, ask in a one-shot run", async () => {
  const fake = resolve(import.meta.dirname, "../fakes/fake-claude.mjs");
  const sb = makeInProcessSandbox(server, { agents: { defaults: { cli: { path: fake } } } });
  const log = join(sb.root, "claude-runs.jsonl");
  writeFileSync(join(sb.root, "schema.json"), JSON.stringify({ type: "object" }));
  const env = { FAKE_CLAUDE_LOG: log, FAKE_CLAUDE_SCRIPTS: "text-thinking", ANTHROPIC_API_KEY: undefined };
  const schema = await sb.keen(["run", "--no-stdin", "--runner", "cli", "--output-schema", join(sb.root, "schema.json"), "hi"], { env });
  assert.equal(schema.code, 2);
  assert.match(schema.stderr, /^keen: --output-schema is not supported with the CLI runner/);
  const record = await sb.keen(["run", "--no-stdin", "--runner", "cli", "--record", join(sb.root, "c.jsonl"), "hi"], { env });
  assert.equal(record.code, 2);
  assert.match(record.stderr, /cannot be used with --runner cli/);
  // One-shot keen run has nobody to answer the CLI's asks.
  const ask = await sb.keen(["run", "--no-stdin", "--runner", "cli", "--permission-mode", "ask", "run echo hi"], { env });
  assert.equal(ask.code, 2);
  assert.match(ask.stderr, /needs someone to answer/);
  assert.equal(existsSync(log), false, "claude never ran");
  assert.deepEqual(await sb.sessions(), []);
});

test("without bash (--disallowed-tools bash) no job tool is offered: nothing could start a job", async () => {
  const sb = makeInProcessSandbox(server);
  server.enqueue({ text: "ok" });
  // --sandbox off: a text-only turn, and a unit test must not warm the sandbox up.
  const r = await sb.keen(["run", "--headless", "--no-stdin", "--sandbox", "off", "--disallowed-tools", "bash", "hi"]);
  assert.equal(r.code, 0, r.stderr);
  const start = JSON.parse(r.stdout.split("\n")[0]!);
  assert.equal(start.kind, "session-start");
  const tools = start.tools as string[];
  assert.deepEqual(tools.filter((name) => name.startsWith("job_") || name === "bash"), []);
  assert.ok(tools.includes("read_file"));
  assert.deepEqual(server.requests[0]!.body.tools.map((t: { name: string }) => t.name).filter((name: string) => name.startsWith("job_") || name === "bash"), [], "nor sent to the model");
});
