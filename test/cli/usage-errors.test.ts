import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../storage/level-store.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeTempDir } from "../temp.js";
import { inProcess } from "./in-process.js";

// `keen run` usage errors, through the same main() the bundle runs, in this process: each case
// costs milliseconds instead of a Keen start. test/e2e/run-usage-errors.test.ts keeps one spawned
// case per kind of failure (commander, a flag, the store, the config, the project config, keys).

const server = useMockLLMServer();

/** A KEEN_HOME with a user config, and a workspace, like the e2e sandbox. */
function sandbox(config: Record<string, unknown> = {}) {
  const root = realpathSync(makeTempDir("keen-usage-"));
  const home = join(root, "keen-home");
  const workspace = join(root, "ws");
  mkdirSync(home, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(home, "config.json"), JSON.stringify({ stdinGraceMs: 300, ...config }));
  const env: Record<string, string | undefined> = {
    KEEN_HOME: home, HOME: join(root, "user-home"),
    ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url, OPENAI_API_KEY: undefined, OPENAI_BASE_URL: `${server.url}/v1`,
  };
  return { home, workspace, env };
}
type Sandbox = ReturnType<typeof sandbox>;

/** main(args) with the sandbox's env and the workspace as cwd, in this process (test/cli/in-process.ts). */
function keen(sb: Sandbox, args: string[], env: Record<string, string | undefined> = {}) {
  return inProcess(args, { ...sb.env, ...env }, sb.workspace);
}

/** Exit 2, one line on stderr matching `line`, no session, no request. */
async function assertUsageError(sb: Sandbox, args: string[], line: RegExp, env: Record<string, string | undefined> = {}) {
  const r = await keen(sb, ["run", "--no-stdin", ...args], env);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^keen: [^\n]+\n$/, "one line on stderr");
  assert.match(r.stderr, line);
  assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
  assert.deepEqual(await openStore(sb.home).list(), []);
  assert.equal(server.requests.length, 0);
}

const flagCases: [string, string[], RegExp][] = [
  ["a bad --format", ["--format", "xml", "hi"], /--format.*'xml'.*text, json/],
  ["an unknown --permission-mode", ["--permission-mode", "yolo", "hi"], /--permission-mode.*'yolo'.*auto, accept-edits, ask, read-only/],
  ["--stream-deltas without --headless", ["--stream-deltas", "hi"], /^keen: --stream-deltas needs --headless\n$/],
  ["--headless with --format json", ["--headless", "--format", "json", "hi"], /--headless.*cannot be combined with --format/],
  ["--headless with --format text", ["--headless", "--format", "text", "hi"], /--headless.*cannot be combined with --format/],
  ["a zero --timeout", ["--timeout", "0", "hi"], /--timeout must be a positive number/],
  // Beyond a Node timer's 2^31-1 ms, setTimeout fires at once: that must not become an instant timeout.
  ["a --timeout beyond what a timer can hold", ["--timeout", "1e12", "hi"], /^keen: --timeout must be at most 2147483 seconds \(about 24 days\), not "1e12"\n$/],
  ["an infinite --timeout", ["--timeout", "Infinity", "hi"], /--timeout must be a positive number/],
  ["a zero --max-turns", ["--max-turns", "0", "hi"], /^keen: --max-turns must be a positive integer, not "0"\n$/],
  ["a fractional --max-turns", ["--max-turns", "1.5", "hi"], /--max-turns must be a positive integer/],
  ["an unknown tool in --allowed-tools", ["--allowed-tools", "read_file,teleport", "hi"], /unknown tool "teleport"; tools: bash, read_file/],
  ["an unknown tool in --disallowed-tools", ["--disallowed-tools", "nope", "hi"], /unknown tool "nope"/],
  ["an unknown provider", ["--model", "acme/x1", "hi"], /unknown provider "acme"/],
  ["a missing --cwd", ["--cwd", "/nonexistent/keen-e2e", "hi"], /working directory \/nonexistent\/keen-e2e does not exist/],
  ["an unknown session with a valid-looking full id", ["--session", "01990000-0000-7000-8000-000000000000", "hi"], /no session matches/],
];

for (const [name, args, line] of flagCases) {
  test(`usage error: ${name}`, async () => {
    await assertUsageError(sandbox(), args, line);
  });
}

test("usage error: a chosen provider without its key", async () => {
  await assertUsageError(sandbox(), ["--model", "openai/gpt-4.1", "hi"], /provider "openai" needs an API key: set OPENAI_API_KEY/);
});

test("invalid config: broken JSON names the file", async () => {
  const sb = sandbox();
  const file = join(sb.home, "config.json");
  writeFileSync(file, "{ not json");
  await assertUsageError(sb, ["hi"], new RegExp(`^keen: ${file}: not valid JSON`));
});

for (const [key, value] of [
  ["baseURL", "http://evil.example"],
  ["headers", { "x-evil": "1" }],
  ["apiKeyEnv", "EVIL_KEY"],
] as const) {
  test(`a project config with "${key}" is refused with a clear message`, async () => {
    const sb = sandbox();
    mkdirSync(join(sb.workspace, ".keen"), { recursive: true });
    const file = join(sb.workspace, ".keen", "config.json");
    writeFileSync(file, JSON.stringify({ model: "anthropic/claude-haiku-4-5", [key]: value }));
    await assertUsageError(sb, ["hi"], new RegExp(`^keen: ${file}: "${key}" is not allowed in a project config`));
  });
}
