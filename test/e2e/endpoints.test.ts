import { test } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";

const server = useMockLLMServer();

/** A local port nothing listens on (connection refused). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

// The base-URL usage errors (each variable, each bad shape, the config key) are checked in process:
// test/cli/endpoint-errors.test.ts. Here the real process gives one of each kind.
test("a base URL that is not a URL is a usage error naming the variable: exit 2, no request, no session", async () => {
  const sb = makeSandbox(server.url);
  const r = await sb.run(["run", "--headless", "--no-stdin", "hi"], { env: { ANTHROPIC_BASE_URL: "htp//127.0.0.1:8080" } });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr, 'keen: ANTHROPIC_BASE_URL is not an http(s) URL: "htp//127.0.0.1:8080" (expected e.g. http://127.0.0.1:8080)\n');
  assert.deepEqual(await sb.sessions(), []);
  assert.equal(server.requests.length, 0);
  rmSync(sb.root, { recursive: true, force: true });
});

test("a config base URL that is not an http(s) URL names the file and the key", async () => {
  const sb = makeSandbox(server.url, { providers: { local: { kind: "openai", baseURL: "localhost:8080", defaultModel: "m", keyOptional: true } } });
  const r = await sb.run(["run", "--no-stdin", "--model", "local/m", "hi"]);
  assert.equal(r.code, 2);
  assert.equal(r.stderr, `keen: ${join(sb.home, "config.json")}: providers.local.baseURL: not an http(s) URL\n`);
  assert.deepEqual(await sb.sessions(), []);
  rmSync(sb.root, { recursive: true, force: true });
});

test("connection refused: one retry at most, then a message naming the URL and the variable", async () => {
  const sb = makeSandbox(server.url);
  const url = `http://127.0.0.1:${await closedPort()}`;
  const r = await sb.run(["run", "--headless", "--no-stdin", "hi"], { env: { ANTHROPIC_BASE_URL: url } });
  assert.equal(r.code, 1, r.stderr);
  const lines = parseLines(r.stdout);
  assert.equal(lines.filter((l) => l.kind === "retry").length, 1, "retried once, not up to maxRetries (4)");
  const error = lines.find((l) => l.kind === "error")!.message as string;
  assert.match(error, new RegExp(`^cannot reach ${url} \\(from ANTHROPIC_BASE_URL\\): connection refused \\(.*ECONNREFUSED`));
  assert.match(r.stderr, new RegExp(`keen: error: cannot reach ${url} \\(from ANTHROPIC_BASE_URL\\)`));
  rmSync(sb.root, { recursive: true, force: true });
});

test("a host that does not resolve: one retry at most, the message names the URL and the config key", async () => {
  const url = "http://keen-e2e-no-such-host.invalid:4321/v1";
  const sb = makeSandbox(server.url, { providers: { local: { kind: "openai", baseURL: url, defaultModel: "m", keyOptional: true } } });
  const r = await sb.run(["run", "--headless", "--no-stdin", "--model", "local/m", "hi"]);
  assert.equal(r.code, 1, r.stderr);
  const lines = parseLines(r.stdout);
  assert.ok(lines.filter((l) => l.kind === "retry").length <= 1);
  assert.match(lines.find((l) => l.kind === "error")!.message, new RegExp(`^cannot reach ${url} \\(from providers\\.local\\.baseURL in your config\\): (host not found|DNS lookup failed)`));
  rmSync(sb.root, { recursive: true, force: true });
});

test("through a proxy, Node's experimental-proxy warning is not printed", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ text: "via proxy" });
  const r = await sb.run(["run", "--no-stdin", "hi"], { env: { ANTHROPIC_BASE_URL: "http://keen-e2e.invalid:4321", HTTP_PROXY: server.url } });
  assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 0, stdout: "via proxy\n", stderr: "" });
  assert.deepEqual(server.tunnels, ["keen-e2e.invalid:4321"]);
  rmSync(sb.root, { recursive: true, force: true });
});
