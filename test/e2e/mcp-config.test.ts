/**
 * Where MCP servers come from and who may start them: a project's `.mcp.json`
 * only after `keen mcp trust` (bound to its content), `${VAR}` expansion and
 * what a project may not read, `--mcp-config`, `keen mcp list/get`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";
import { fakeServer, mcpNames, strip } from "./mcp-helpers.js";

const server = useMockLLMServer();

type Sandbox = ReturnType<typeof makeSandbox>;

/** One run whose model calls `env` with `name` on the server `proj`; returns the stream and stderr. */
async function envCall(sb: Sandbox, name: string, env: Record<string, string> = {}) {
  server.reset();
  server.enqueue({ toolCalls: [{ id: "e", name: "mcp__proj__env", input: { name } }] }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"], { env });
  assert.equal(r.code, 0, r.stderr);
  return { lines: parseLines(r.stdout), stderr: r.stderr };
}

test("a project's .mcp.json is not started until trusted; trust is bound to its content; untrust takes it back", async () => {
  const sb = makeSandbox(server.url);
  const marks = join(sb.root, "never-started");
  const file = join(sb.workspace, ".mcp.json");
  writeFileSync(file, JSON.stringify({ mcpServers: { proj: fakeServer("--once", { args: [fakeServer().args[0], "--once", marks] }) } }));
  server.enqueue({ text: "ok" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"]);
  assert.equal(r.code, 0, r.stderr);
  const message = `project server "proj" (${file}) not started: run \`keen mcp trust\` in this workspace to use it`;
  assert.equal(r.stderr, `keen: mcp: ${message}\n`);
  const lines = parseLines(r.stdout);
  assert.deepEqual(lines.filter((l) => l.kind === "mcp-server").map(strip), [{ kind: "mcp-server", server: "proj", status: "untrusted", tools: [], message }]);
  assert.ok(!lines[0]!.tools.some((t: string) => t.startsWith("mcp__")));
  assert.throws(() => readFileSync(marks), /ENOENT/, "the command never ran");

  const list = await sb.run(["mcp", "list"]);
  assert.equal(list.code, 0, list.stderr);
  assert.equal(list.stdout, "NAME  SOURCE   TRANSPORT  TRUST      STATUS     TOOLS\nproj  project  stdio      untrusted  untrusted  0\n");
  assert.equal(list.stderr, "keen: this workspace's .mcp.json is not trusted: review it, then run `keen mcp trust`\n");

  const trust = await sb.run(["mcp", "trust"]);
  assert.equal(trust.code, 0, trust.stderr);
  assert.match(trust.stdout, /^Trusted .*\.mcp\.json \(any change to it revokes this\)\. Its servers:\n {2}proj: .*mcp-server\.mjs --once /);
  const stored = JSON.parse(readFileSync(join(sb.home, "config.json"), "utf8"));
  assert.deepEqual(Object.keys(stored.mcpTrust), [sb.workspace]);
  assert.equal(stored.stdinGraceMs, 300, "the rest of the config is kept");
  const trusted = await envCall(sb, "HOME");
  assert.equal(trusted.stderr, "");
  assert.deepEqual(trusted.lines[0]!.tools.filter((t: string) => t.startsWith("mcp__")), mcpNames("proj"));

  // A changed file is a new decision to make.
  writeFileSync(file, JSON.stringify({ mcpServers: { proj: fakeServer() } }));
  server.reset();
  server.enqueue({ text: "ok" });
  const changed = await sb.run(["run", "--headless", "--no-stdin", "go"]);
  assert.match(changed.stderr, /project server "proj" .* not started: run `keen mcp trust`/);

  assert.equal((await sb.run(["mcp", "trust"])).code, 0);
  const untrust = await sb.run(["mcp", "untrust"]);
  assert.equal(untrust.stdout, `${sb.workspace}: .mcp.json no longer trusted.\n`);
  assert.equal(JSON.parse(readFileSync(join(sb.home, "config.json"), "utf8")).mcpTrust, undefined);
});

test("${VAR} in a project's .mcp.json: plain variables expand, provider keys never, secret-looking ones only when trust named them", async () => {
  const sb = makeSandbox(server.url);
  const file = join(sb.workspace, ".mcp.json");
  const write = (value: string) =>
    writeFileSync(file, JSON.stringify({ mcpServers: { proj: fakeServer(undefined, { env: { GIVEN: value } }) } }));
  const env = { PLAIN_DIR: "some-dir", GITHUB_TOKEN: "ghp_secret_value_123" };

  write("${PLAIN_DIR}/x and ${UNSET_ONE:-fallback}");
  await sb.run(["mcp", "trust"]);
  const plain = await envCall(sb, "GIVEN", env);
  // Env values of MCP servers are secrets: the model sees them redacted, but the server had the expansion.
  assert.equal(plain.lines.find((l) => l.kind === "tool-result")!.result, "[redacted]");

  write("${ANTHROPIC_API_KEY}");
  await sb.run(["mcp", "trust", "--allow-env", "ANTHROPIC_API_KEY"]);
  const key = await envCall(sb, "GIVEN", env);
  assert.match(key.stderr, /server "proj" failed to start: \$\{ANTHROPIC_API_KEY\} is a provider key and is never given to a project's MCP server/);
  assert.ok(!key.lines[0]!.tools.some((t: string) => t.startsWith("mcp__")));

  write("${GITHUB_TOKEN}");
  const trust = await sb.run(["mcp", "trust"]);
  assert.equal(trust.stderr, "keen: not given to these servers: GITHUB_TOKEN (secret-looking); allow them with --allow-env GITHUB_TOKEN\n");
  const refused = await envCall(sb, "GIVEN", env);
  assert.match(refused.stderr, /\$\{GITHUB_TOKEN\} looks secret; allow it with `keen mcp trust --allow-env GITHUB_TOKEN`/);

  await sb.run(["mcp", "trust", "--allow-env", "GITHUB_TOKEN"]);
  const allowed = await envCall(sb, "GIVEN", env);
  assert.equal(allowed.stderr, "");
  assert.equal(allowed.lines.find((l) => l.kind === "tool-result")!.result, "[redacted]");
  assert.doesNotMatch(JSON.stringify(server.requests) + JSON.stringify(allowed.lines), /ghp_secret_value_123/);
  // Secret-looking variables of Keen's own environment are not inherited: a server gets what its env names.
  const inherited = await envCall(sb, "GITHUB_TOKEN", env);
  assert.equal(inherited.lines.find((l) => l.kind === "tool-result")!.result, "(unset)");
});

test("--mcp-config adds servers for one run; a missing or invalid file is a usage error; sandbox: true without a sandbox is refused, not ignored", async () => {
  const sb = makeSandbox(server.url);
  const extra = join(sb.root, "extra.json");
  writeFileSync(extra, JSON.stringify({ mcpServers: { flagged: fakeServer(), boxed: fakeServer(undefined, { sandbox: true }) } }));
  server.enqueue({ text: "ok" });
  // test/e2e/mcp-sandbox.test.ts runs such a server inside the sandbox.
  const r = await sb.run(["run", "--headless", "--no-stdin", "--sandbox", "off", "--mcp-config", extra, "go"]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(parseLines(r.stdout)[0]!.tools.filter((t: string) => t.startsWith("mcp__")), mcpNames("flagged"));
  assert.match(r.stderr, /^keen: mcp: server "boxed" failed to start: "sandbox": true, but the sandbox is off for this session \(--sandbox off or sandbox\.mode\); the server is not started unconfined/);

  const missing = await sb.run(["run", "--headless", "--no-stdin", "--mcp-config", join(sb.root, "nope.json"), "go"]);
  assert.deepEqual([missing.code, missing.stdout, missing.stderr], [2, "", `keen: --mcp-config ${join(sb.root, "nope.json")}: no such file\n`]);
  writeFileSync(extra, JSON.stringify({ mcpServers: { bad: { args: [] } } }));
  const invalid = await sb.run(["run", "--headless", "--no-stdin", "--mcp-config", extra, "go"]);
  assert.deepEqual([invalid.code, invalid.stdout], [2, ""]);
  assert.equal(invalid.stderr, `keen: --mcp-config ${extra}: mcpServers.bad: an MCP server needs "command" (stdio) or "url" (http, sse)\n`);
  const badUser = makeSandbox(server.url, { mcpServers: { "bad name": fakeServer() } });
  const user = await badUser.run(["mcp", "list"]);
  assert.equal(user.code, 2);
  assert.match(user.stderr, /^keen: .*config\.json: mcpServers\.bad name: server names use letters, digits, _ and - \(at most 40\)\n$/);
});

test("keen mcp list and get: source, transport, status and tools of each server", async () => {
  const sb = makeSandbox(server.url, { mcpServers: { fake: fakeServer(), broken: fakeServer("--exit-at-start") } });
  const list = await sb.run(["mcp", "list", "--json"]);
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(JSON.parse(list.stdout), [
    { name: "fake", source: "user", transport: "stdio", trust: "n/a", status: "connected", tools: 9 },
    { name: "broken", source: "user", transport: "stdio", trust: "n/a", status: "failed", tools: 0, error: "the server exited (code 3) before it was ready" },
  ]);
  const get = await sb.run(["mcp", "get", "fake"]);
  assert.equal(get.code, 0, get.stderr);
  assert.equal(get.stdout, [
    "fake  (user, stdio)", "status: connected", `log: ${join(sb.home, "mcp-logs", "fake.log")}`, "tools (9):", ...mcpNames("fake").map((n) => `  ${n}`), "",
  ].join("\n"));
  const unknown = await sb.run(["mcp", "get", "nope"]);
  assert.deepEqual([unknown.code, unknown.stderr], [2, "keen: no MCP server \"nope\"; servers: fake, broken\n"]);
});
