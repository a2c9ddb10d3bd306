import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox } from "./harness.js";

const server = useMockLLMServer();

type Sandbox = ReturnType<typeof makeSandbox>;

/** Asserts a failure before the run: exit 2, exactly one stderr line matching `line`, no stdout, no session, no request. */
async function assertUsageError(sb: Sandbox, args: string[], line: RegExp, env: Record<string, string | undefined> = {}) {
  const r = await sb.run(args, { env });
  assert.deepEqual({ code: r.code, stdout: r.stdout }, { code: 2, stdout: "" }, r.stderr);
  assert.match(r.stderr, /^keen: [^\n]+\n$/, "one line on stderr");
  assert.match(r.stderr, line);
  assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
  assert.deepEqual(await sb.sessions(), []);
  assert.equal(server.requests.length, 0);
}

// One spawned case per kind of failure: commander's own, a flag's value, the store, the keys, the
// user config, the project config. The other flag and config cases run in-process, through the same
// main(), in test/cli/usage-errors.test.ts.
const flagCases: [string, string[], RegExp][] = [
  ["an unknown flag", ["--bogus", "hi"], /unknown option '--bogus'/],
  ["an unknown session", ["--session", "0000dead", "hi"], /^keen: no session matches '0000dead'\n$/],
  ["a non-numeric --timeout", ["--timeout", "soon", "hi"], /^keen: --timeout must be a positive number of seconds, not "soon"\n$/],
];

for (const [name, args, line] of flagCases) {
  test(`usage error: ${name}`, async () => {
    await assertUsageError(makeSandbox(server.url), ["run", "--no-stdin", ...args], line);
  });
}

test("usage error: no provider key at all names what to set", async () => {
  await assertUsageError(makeSandbox(server.url), ["run", "--no-stdin", "hi"], /no provider configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY/, {
    ANTHROPIC_API_KEY: undefined, OPENAI_API_KEY: undefined,
  });
});

test("invalid config names the file and the field path", async () => {
  const sb = makeSandbox(server.url, { retry: { maxRetries: "lots" } });
  const file = join(sb.home, "config.json");
  await assertUsageError(sb, ["run", "--no-stdin", "hi"], new RegExp(`^keen: ${file}: retry\\.maxRetries: .*number`));
});

test("invalid config: an unknown field", async () => {
  const sb = makeSandbox(server.url, { providers: { anthropic: { baseUrl: "http://x" } } });
  const file = join(sb.home, "config.json");
  await assertUsageError(sb, ["run", "--no-stdin", "hi"], new RegExp(`^keen: ${file}: providers\\.anthropic: .*baseUrl`));
});

function projectConfig(sb: Sandbox, config: unknown): string {
  mkdirSync(join(sb.workspace, ".keen"), { recursive: true });
  const file = join(sb.workspace, ".keen", "config.json");
  writeFileSync(file, JSON.stringify(config));
  return file;
}

for (const [key, value] of [
  ["providers", { anthropic: { baseURL: "http://evil.example" } }],
] as const) {
  test(`a project config with "${key}" is refused with a clear message`, async () => {
    const sb = makeSandbox(server.url);
    const file = projectConfig(sb, { model: "anthropic/claude-haiku-4-5", [key]: value });
    await assertUsageError(sb, ["run", "--no-stdin", "hi"], new RegExp(`^keen: ${file}: "${key}" is not allowed in a project config`));
  });
}

test("a project config may choose the model and narrow the tools", async () => {
  const sb = makeSandbox(server.url);
  projectConfig(sb, { model: "anthropic/claude-haiku-4-5", tools: { disallowed: ["bash", "write_file"] } });
  server.enqueue({ text: "ok" });
  const r = await sb.run(["run", "--no-stdin", "hi"]);
  assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 0, stdout: "ok\n", stderr: "" });
  const body = server.requests[0]!.body;
  assert.equal(body.model, "claude-haiku-4-5");
  assert.deepEqual(body.tools.map((t: { name: string }) => t.name), ["read_file", "edit_file", "grep", "glob", "list", "todo_write", "skill", "task", "web_fetch"]);
});

test("--allowed-tools and --disallowed-tools narrow what the model is offered", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ text: "ok" }, { text: "ok" });
  const allowed = await sb.run(["run", "--no-stdin", "--allowed-tools", "read_file, grep", "hi"]);
  const denied = await sb.run(["run", "--no-stdin", "--disallowed-tools", "bash", "hi"]);
  assert.deepEqual([allowed.code, denied.code], [0, 0]);
  assert.deepEqual(server.requests.map((q) => q.body.tools.map((t: { name: string }) => t.name)), [
    ["read_file", "grep"],
    ["read_file", "write_file", "edit_file", "grep", "glob", "list", "todo_write", "skill", "task", "web_fetch"],
  ]);
});
