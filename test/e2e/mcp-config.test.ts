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
import { parseLines } from "./harness.js";
import { fakeServer, mcpNames, strip, mcpSandbox } from "./mcp-helpers.js";

const server = useMockLLMServer();

type Sandbox = ReturnType<typeof mcpSandbox>;

/** One run whose model calls `env` with `name` on the server `proj`; returns the stream and stderr. */
async function envCall(sb: Sandbox, name: string, env: Record<string, string> = {}) {
  server.reset();
  server.enqueue({ toolCalls: [{ id: "e", name: "mcp__proj__env", input: { name } }] }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"], { env });
  assert.equal(r.code, 0, r.stderr);
  return { lines: parseLines(r.stdout), stderr: r.stderr };
}

// keen mcp list of an untrusted file, a changed file, untrust: test/cli/mcp-commands.test.ts (in-process).
test("a project's .mcp.json is not started until trusted; once trusted, a run offers its tools", async () => {
  const sb = mcpSandbox(server.url);
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

  const trust = await sb.run(["mcp", "trust"]);
  assert.equal(trust.code, 0, trust.stderr);
  assert.match(trust.stdout, /^Trusted .*\.mcp\.json \(any change to it revokes this\)\. Its servers:\n {2}proj: .*mcp-server\.mjs --once /);
  const stored = JSON.parse(readFileSync(join(sb.home, "config.json"), "utf8"));
  assert.deepEqual(Object.keys(stored.mcpTrust), [sb.workspace]);
  assert.equal(stored.stdinGraceMs, 300, "the rest of the config is kept");
  const trusted = await envCall(sb, "HOME");
  assert.equal(trusted.stderr, "");
  assert.deepEqual(trusted.lines[0]!.tools.filter((t: string) => t.startsWith("mcp__")), mcpNames("proj"));
});

// Each rule of the expansion after `keen mcp trust` (plain, defaults, provider keys, --allow-env): test/cli/mcp-commands.test.ts.
test("${VAR} in a project's .mcp.json: a secret-looking one only when trust named it; the server gets it, no output shows it", async () => {
  const sb = mcpSandbox(server.url);
  writeFileSync(join(sb.workspace, ".mcp.json"), JSON.stringify({ mcpServers: { proj: fakeServer(undefined, { env: { GIVEN: "${GITHUB_TOKEN}" } }) } }));
  const env = { GITHUB_TOKEN: "ghp_secret_value_123" };

  // keen mcp trust through main() in this process here (a Keen start less each; the test above runs the real
  // command): what it grants is Keen's decision, and the runs that use it stay real.
  const trust = await sb.main(["mcp", "trust"]);
  assert.equal(trust.stderr, "keen: not given to these servers: GITHUB_TOKEN (secret-looking); allow them with --allow-env GITHUB_TOKEN\n");
  const refused = await envCall(sb, "GIVEN", env);
  assert.match(refused.stderr, /server "proj" failed to start: \$\{GITHUB_TOKEN\} looks secret; allow it with `keen mcp trust --allow-env GITHUB_TOKEN`/);
  assert.ok(!refused.lines[0]!.tools.some((t: string) => t.startsWith("mcp__")));

  assert.equal((await sb.main(["mcp", "trust", "--allow-env", "GITHUB_TOKEN"])).code, 0);
  server.reset();
  // Secret-looking variables of Keen's own environment are not inherited: a server gets what its env names.
  server.enqueue({ toolCalls: [{ id: "e", name: "mcp__proj__env", input: { name: "GIVEN" } }, { id: "i", name: "mcp__proj__env", input: { name: "GITHUB_TOKEN" } }] }, { text: "done" });
  const allowed = await sb.run(["run", "--headless", "--no-stdin", "go"], { env });
  assert.deepEqual([allowed.code, allowed.stderr], [0, ""]);
  const lines = parseLines(allowed.stdout);
  // Env values of MCP servers are secrets: the model sees them redacted, but the server had the expansion.
  assert.deepEqual(lines.filter((l) => l.kind === "tool-result").map((l) => [l.tool_call_id, l.result]), [["e", "[redacted]"], ["i", "(unset)"]]);
  assert.doesNotMatch(JSON.stringify(server.requests) + allowed.stdout, /ghp_secret_value_123/);
});

// A missing or invalid --mcp-config file and an invalid user config are usage errors: test/cli/mcp-commands.test.ts.
test("--mcp-config adds servers for one run; sandbox: true without a sandbox is refused, not ignored", async () => {
  const sb = mcpSandbox(server.url);
  const extra = join(sb.root, "extra.json");
  writeFileSync(extra, JSON.stringify({ mcpServers: { flagged: fakeServer(), boxed: fakeServer(undefined, { sandbox: true }) } }));
  server.enqueue({ text: "ok" });
  // test/e2e/mcp-sandbox.test.ts runs such a server inside the sandbox.
  const r = await sb.run(["run", "--headless", "--no-stdin", "--sandbox", "off", "--mcp-config", extra, "go"]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(parseLines(r.stdout)[0]!.tools.filter((t: string) => t.startsWith("mcp__")), mcpNames("flagged"));
  assert.match(r.stderr, /^keen: mcp: server "boxed" failed to start: "sandbox": true, but the sandbox is off for this session \(--sandbox off or sandbox\.mode\); the server is not started unconfined/);
});

// keen mcp get of a server that is not configured: test/cli/mcp-commands.test.ts (in-process).
test("keen mcp list and get: source, transport, status and tools of each server", async () => {
  const sb = mcpSandbox(server.url, { mcpServers: { fake: fakeServer(), broken: fakeServer("--exit-at-start") } });
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
});
