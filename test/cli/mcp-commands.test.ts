import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { collectMcpServers } from "../../app/mcp/sources.js";
import { isSecretEnvName } from "../../app/tools/index.js";
import { makeTempDir } from "../temp.js";
import { inProcess } from "./in-process.js";

// `keen mcp add/remove/trust` and `--mcp-config` usage errors through the same main() the bundle
// runs, in this process: each case costs milliseconds instead of a Keen start. The spawned side
// (exit code, stdout/stderr of the real process, the servers a run then offers) stays in
// test/e2e/mcp-add.test.ts and test/e2e/mcp-config.test.ts, one case per contract.

const FAKE_MCP = "/fake/mcp-server.mjs";

/** A KEEN_HOME with a user config, and a workspace, like the e2e sandbox. */
function sandbox(config: Record<string, unknown> = {}) {
  const root = realpathSync(makeTempDir("keen-mcp-cmd-"));
  const home = join(root, "keen-home");
  const workspace = join(root, "ws");
  mkdirSync(home, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(home, "config.json"), JSON.stringify({ stdinGraceMs: 300, ...config }));
  // No provider traffic: every case here fails or finishes before a model is asked.
  const env: Record<string, string | undefined> = { KEEN_HOME: home, HOME: join(root, "user-home"), ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" };
  return { root, home, workspace, env, config: join(home, "config.json") };
}
type Sandbox = ReturnType<typeof sandbox>;

/** main(args) with the sandbox's env and the workspace as cwd, in this process (test/cli/in-process.ts). */
function keen(sb: Sandbox, args: string[]) {
  return inProcess(args, sb.env, sb.workspace);
}

const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"));

/** What a session in this workspace would take from the configs (as app/cli/mcp-setup.ts collects them). */
function sources(sb: Sandbox, env: NodeJS.ProcessEnv = {}) {
  const config = readJson(sb.config);
  return collectMcpServers({
    user: config.mcpServers, userFile: sb.config, workspace: sb.workspace, trust: config.mcpTrust, env,
    providerKeyNames: ["ANTHROPIC_API_KEY"], isSecretName: isSecretEnvName,
  });
}

/** The servers a session in this workspace would start (names), and the untrusted ones it lists. */
function started(sb: Sandbox) {
  const found = sources(sb);
  return { servers: found.servers.map((s) => s.name), untrusted: found.untrusted.map((s) => s.name) };
}

test("bad input to keen mcp add and remove: one line, exit 2, nothing on stdout, the config untouched", async () => {
  const sb = sandbox({ mcpServers: { have: { command: "x" } } });
  const before = readFileSync(sb.config, "utf8");
  const cases: [string[], string][] = [
    [["add"], "missing the server name: keen mcp add <name> …"],
    [["add", "-e", "A=1", "name", "--", "cmd"], "-e name: expected KEY=VALUE (put the server name before -e, or end the list with --)"],
    [["add", "n"], "missing the command: keen mcp add <name> [-e KEY=VALUE…] -- <command> [args…]"],
    [["add", "bad name", "--", "x"], "server name bad name: letters, digits, _ and - (at most 40)"],
    [["add", "have", "--", "x"], `server "have" is already in ${sb.config}; keen mcp remove have --scope user first`],
    [["add", "n", "https://example.com/mcp"], "https://example.com/mcp is a URL: add --transport http (or sse)"],
    [["add", "--transport", "ws", "n", "x"], "--transport ws: expected stdio, http or sse"],
    [["add", "--transport", "http", "n", "not a url"], "not a url: not a URL"],
    [["add", "--transport", "sse", "n", "http://h/sse", "-e", "A=1"], "-e is for stdio servers; an http or sse server takes --header"],
    [["add", "n", "-H", "no colon", "--", "x"], '--header no colon: expected "Name: value"'],
    [["add", "--scope", "local", "n", "--", "x"], "--scope local: Keen has no per-project private MCP config; use --scope user (your config, every workspace) or --scope project (.mcp.json, shared with the repository)"],
    [["add", "--scope", "team", "n", "--", "x"], "--scope team: expected user or project"],
    [["remove", "nothere"], `no MCP server "nothere" in ${sb.config} or ${join(sb.workspace, ".mcp.json")}`],
  ];
  for (const [args, message] of cases) {
    const r = await keen(sb, ["mcp", ...args]);
    assert.deepEqual([r.code, r.stdout, r.stderr], [2, "", `keen: ${message}\n`], args.join(" "));
  }
  assert.equal(readFileSync(sb.config, "utf8"), before);
  writeFileSync(sb.config, "{ not json");
  const broken = await keen(sb, ["mcp", "add", "n", "--", "x"]);
  assert.deepEqual([broken.code, broken.stdout], [2, ""]);
  assert.match(broken.stderr, /^keen: .*config\.json: not valid JSON \(.*\); fix it first\n$/);
  assert.equal(readFileSync(sb.config, "utf8"), "{ not json");
});

test("keen mcp add --scope project writes .mcp.json as Claude Code does; a trusted file stays trusted after your own change", async () => {
  const sb = sandbox();
  const file = join(sb.workspace, ".mcp.json");
  const first = await keen(sb, ["mcp", "add", "--scope", "project", "one", "--", process.execPath, FAKE_MCP]);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stdout, `Added stdio MCP server "one" to ${file}: ${process.execPath} ${FAKE_MCP}\n`);
  assert.equal(first.stderr, "keen: this workspace's .mcp.json is not trusted: its servers start once you run `keen mcp trust`\n");
  assert.deepEqual(readJson(file), { mcpServers: { one: { type: "stdio", command: process.execPath, args: [FAKE_MCP], env: {} } } });
  assert.deepEqual(started(sb), { servers: [], untrusted: ["one"] }, "not trusted yet");

  assert.equal((await keen(sb, ["mcp", "trust"])).code, 0);
  const second = await keen(sb, ["mcp", "add", "--scope", "project", "two", "--", process.execPath, FAKE_MCP]);
  assert.deepEqual([second.code, second.stderr], [0, "keen: .mcp.json was trusted and stays trusted (the change is yours)\n"]);
  assert.deepEqual(started(sb), { servers: ["one", "two"], untrusted: [] });

  const removed = await keen(sb, ["mcp", "remove", "one", "--scope", "project"]);
  assert.deepEqual([removed.code, removed.stdout, removed.stderr], [0, `Removed MCP server "one" from ${file}\n`, "keen: .mcp.json was trusted and stays trusted (the change is yours)\n"]);
  assert.deepEqual(started(sb), { servers: ["two"], untrusted: [] });
  assert.equal(readJson(sb.config).stdinGraceMs, 300, "the rest of the user config is kept");
  // A file changed by someone else is a new decision.
  writeFileSync(file, JSON.stringify({ mcpServers: { two: { command: process.execPath, args: [FAKE_MCP] }, three: { command: "x" } } }));
  assert.deepEqual(started(sb), { servers: [], untrusted: ["two", "three"] });
  const third = await keen(sb, ["mcp", "remove", "three"]);
  assert.equal(third.code, 0, third.stderr);
  assert.match(third.stderr, /not trusted: its servers start once you run `keen mcp trust`/);
  assert.deepEqual(started(sb), { servers: [], untrusted: ["two"] });
});

test("--mcp-config: inline JSON that is not valid or names a server without command or url is one line and exit 2", async () => {
  const sb = sandbox();
  const bad = await keen(sb, ["run", "--headless", "--no-stdin", "--mcp-config", '{"mcpServers": {', "go"]);
  assert.deepEqual([bad.code, bad.stdout], [2, ""]);
  assert.match(bad.stderr, /^keen: --mcp-config \(inline JSON\): not valid JSON \([^\n]*\)\n$/);
  const wrong = await keen(sb, ["run", "--headless", "--no-stdin", "--mcp-config", '{"mcpServers": {"x": {"args": []}}}', "go"]);
  assert.deepEqual([wrong.code, wrong.stdout, wrong.stderr], [2, "", 'keen: --mcp-config (inline JSON): mcpServers.x: an MCP server needs "command" (stdio) or "url" (http, sse)\n']);
  const missing = await keen(sb, ["run", "--headless", "--no-stdin", "--mcp-config", join(sb.root, "nope.json"), "go"]);
  assert.deepEqual([missing.code, missing.stdout, missing.stderr], [2, "", `keen: --mcp-config ${join(sb.root, "nope.json")}: no such file\n`]);
  const extra = join(sb.root, "extra.json");
  writeFileSync(extra, JSON.stringify({ mcpServers: { bad: { args: [] } } }));
  const invalid = await keen(sb, ["run", "--headless", "--no-stdin", "--mcp-config", extra, "go"]);
  assert.deepEqual([invalid.code, invalid.stdout, invalid.stderr], [2, "", `keen: --mcp-config ${extra}: mcpServers.bad: an MCP server needs "command" (stdio) or "url" (http, sse)\n`]);
});

test("keen mcp list with a user config whose server name is invalid: one line, exit 2", async () => {
  const sb = sandbox({ mcpServers: { "bad name": { command: "x" } } });
  const r = await keen(sb, ["mcp", "list"]);
  assert.deepEqual([r.code, r.stdout], [2, ""]);
  assert.match(r.stderr, /^keen: .*config\.json: mcpServers\.bad name: server names use letters, digits, _ and - \(at most 40\)\n$/);
});

test("${VAR} in a project's .mcp.json, after keen mcp trust: plain variables expand, provider keys never, secret-looking ones only when trust named them", async () => {
  const sb = sandbox();
  const write = (value: string) => writeFileSync(join(sb.workspace, ".mcp.json"), JSON.stringify({ mcpServers: { proj: { command: "x", env: { GIVEN: value } } } }));
  const env = { PLAIN_DIR: "some-dir", GITHUB_TOKEN: "ghp_secret_value_123", ANTHROPIC_API_KEY: "sk-ant-key" };
  const given = () => sources(sb, env).servers.map((s) => ("error" in s && s.error ? { error: s.error } : { GIVEN: (s.config as { env?: Record<string, string> }).env?.GIVEN }));

  write("${PLAIN_DIR}/x and ${UNSET_ONE:-fallback}");
  assert.deepEqual((await keen(sb, ["mcp", "trust"])).stderr, "");
  assert.deepEqual(given(), [{ GIVEN: "some-dir/x and fallback" }]);

  write("${ANTHROPIC_API_KEY}");
  assert.equal((await keen(sb, ["mcp", "trust", "--allow-env", "ANTHROPIC_API_KEY"])).code, 0);
  assert.deepEqual(given(), [{ error: "${ANTHROPIC_API_KEY} is a provider key and is never given to a project's MCP server" }]);

  write("${GITHUB_TOKEN}");
  const trust = await keen(sb, ["mcp", "trust"]);
  assert.equal(trust.stderr, "keen: not given to these servers: GITHUB_TOKEN (secret-looking); allow them with --allow-env GITHUB_TOKEN\n");
  assert.deepEqual(given(), [{ error: "${GITHUB_TOKEN} looks secret; allow it with `keen mcp trust --allow-env GITHUB_TOKEN`" }]);

  const allowed = await keen(sb, ["mcp", "trust", "--allow-env", "GITHUB_TOKEN"]);
  assert.deepEqual([allowed.code, allowed.stderr], [0, ""]);
  assert.deepEqual(given(), [{ GIVEN: "ghp_secret_value_123" }]);
  assert.deepEqual(readJson(sb.config).mcpTrust[sb.workspace].allowEnv, ["GITHUB_TOKEN"]);
});

test("keen mcp list shows an untrusted .mcp.json; trust is bound to its content; untrust takes it back", async () => {
  const sb = sandbox();
  const file = join(sb.workspace, ".mcp.json");
  writeFileSync(file, JSON.stringify({ mcpServers: { proj: { command: "keen-no-such-mcp-server", args: ["--once"] } } }));
  const list = await keen(sb, ["mcp", "list"]);
  assert.equal(list.code, 0, list.stderr);
  assert.equal(list.stdout, "NAME  SOURCE   TRANSPORT  TRUST      STATUS     TOOLS\nproj  project  stdio      untrusted  untrusted  0\n");
  assert.equal(list.stderr, "keen: this workspace's .mcp.json is not trusted: review it, then run `keen mcp trust`\n");

  const trust = await keen(sb, ["mcp", "trust"]);
  assert.deepEqual([trust.code, trust.stderr], [0, ""]);
  assert.equal(trust.stdout, `Trusted ${file} (any change to it revokes this). Its servers:\n  proj: keen-no-such-mcp-server --once\n`);
  assert.deepEqual(Object.keys(readJson(sb.config).mcpTrust), [sb.workspace]);
  assert.equal(readJson(sb.config).stdinGraceMs, 300, "the rest of the config is kept");
  assert.deepEqual(started(sb), { servers: ["proj"], untrusted: [] });

  // A changed file is a new decision to make.
  writeFileSync(file, JSON.stringify({ mcpServers: { proj: { command: "keen-no-such-mcp-server" } } }));
  assert.deepEqual(started(sb), { servers: [], untrusted: ["proj"] });
  const stale = await keen(sb, ["mcp", "untrust"]);
  assert.deepEqual([stale.code, stale.stdout], [0, `${sb.workspace}: .mcp.json no longer trusted (it had changed since it was trusted).\n`]);

  assert.equal((await keen(sb, ["mcp", "trust"])).code, 0);
  assert.deepEqual(started(sb), { servers: ["proj"], untrusted: [] });
  const untrust = await keen(sb, ["mcp", "untrust"]);
  assert.deepEqual([untrust.code, untrust.stdout, untrust.stderr], [0, `${sb.workspace}: .mcp.json no longer trusted.\n`, ""]);
  assert.equal(readJson(sb.config).mcpTrust, undefined);
  assert.deepEqual(started(sb), { servers: [], untrusted: ["proj"] });
  const again = await keen(sb, ["mcp", "untrust"]);
  assert.deepEqual([again.code, again.stdout], [0, `${sb.workspace} was not trusted.\n`]);
});

test("keen mcp get of a server that is not configured: one line naming the servers there are, exit 2", async () => {
  // Commands that are not installed: `get` connects to each server first, and these fail without starting a process.
  const sb = sandbox({ mcpServers: { fake: { command: "keen-no-such-mcp-server" }, broken: { command: "keen-no-such-mcp-server-2" } } });
  const unknown = await keen(sb, ["mcp", "get", "nope"]);
  assert.deepEqual([unknown.code, unknown.stdout, unknown.stderr], [2, "", "keen: no MCP server \"nope\"; servers: fake, broken\n"]);
});
