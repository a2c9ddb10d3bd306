import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createServer, type IncomingMessage } from "node:http";
import { mkdirSync, writeFileSync } from "node:fs";
import { connect, type AddressInfo } from "node:net";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";
import { startStdio } from "./stdio-client.js";

const llm = useMockLLMServer();
const MODEL = "anthropic/claude-test";
const TOKEN = "ghp_e2eSecretValue0123456789";

const PAGE = `<!doctype html><html><head><title>Release notes</title></head><body>
<nav><a href="/">Home</a> <a href="/signin">Sign in</a></nav>
<article><h1>Release notes</h1><p>Version 2 adds streaming to every front end, so the terminal UI, the JSON lines and ACP read one stream.
The deploy token shown in the old guide was ${TOKEN}; rotate it. See <a href="/changelog">the changelog</a> for the full list of changes.</p>
<h2>Upgrading</h2><p>Run the migration once per workspace; it is idempotent and keeps every stored session readable afterwards.</p></article>
</body></html>`;

/** The "web": one local site, and every request that reached it (directly or through the proxy). */
const requests: IncomingMessage[] = [];
const site = createServer((req, res) => {
  requests.push(req);
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
});
/** An HTTP proxy (CONNECT tunnels, as undici's ProxyAgent speaks) that sends every tunnel to the local site, whatever host it names. */
const tunnels: string[] = [];
const proxy = createServer((_req, res) => res.writeHead(405).end());
proxy.on("connect", (req: IncomingMessage, socket: import("node:net").Socket, head: Buffer) => {
  tunnels.push(req.url ?? "");
  const upstream = connect((site.address() as AddressInfo).port, "127.0.0.1", () => {
    socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    upstream.write(head);
    upstream.pipe(socket).pipe(upstream);
  });
  upstream.on("error", () => socket.destroy());
  socket.on("error", () => upstream.destroy());
});
await Promise.all([site, proxy].map((s) => new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve))));
after(async () => {
  for (const s of [site, proxy]) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});
const sitePort = () => (site.address() as AddressInfo).port;

/** The tool_result block Keen sent the model for the call with this id. */
function toolResultSent(id: string): { content: string; is_error?: boolean } {
  for (const req of llm.requests) {
    for (const message of req.body.messages ?? []) {
      for (const block of Array.isArray(message.content) ? message.content : []) {
        if (block.type === "tool_result" && block.tool_use_id === id) {
          const content = typeof block.content === "string" ? block.content : block.content.map((c: { text?: string }) => c.text ?? "").join("");
          return { content, is_error: block.is_error };
        }
      }
    }
  }
  throw new Error(`no tool_result for ${id} was sent`);
}

test("web_fetch through bin/keen (read-only): an allowed local page reaches the model as markdown, redacted; the second call is served from the cache", async () => {
  const sb = makeSandbox(llm.url, { web: { allowedDomains: ["127.0.0.1"] } });
  const url = `http://127.0.0.1:${sitePort()}/notes`;
  const before = requests.length;
  llm.enqueue(
    { toolCalls: [{ id: "toolu_web1", name: "web_fetch", input: { url } }] },
    { toolCalls: [{ id: "toolu_web2", name: "web_fetch", input: { url } }] },
    { text: "Read it." },
  );
  const r = await sb.run(["run", "--headless", "--model", MODEL, "--permission-mode", "read-only", "read the notes"], { env: { GITHUB_TOKEN: TOKEN } });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(llm.unexpected, []);
  const lines = parseLines(r.stdout);
  const use = lines.find((l) => l.kind === "tool-use" && l.tool_call_id === "toolu_web1")!;
  assert.deepEqual([use.tool_kind, use.mutates, use.title], ["network", false, `Fetch ${url}`]);
  assert.ok(!lines.some((l) => l.kind === "permission-request"), "an allowed host is not asked about");
  const sent = toolResultSent("toolu_web1");
  assert.notEqual(sent.is_error, true, sent.content);
  assert.match(sent.content, /^URL: http:\/\/127\.0\.0\.1:\d+\/notes\nTitle: Release notes\n/);
  assert.match(sent.content, /^## Upgrading$/m);
  assert.match(sent.content, new RegExp(`\\[the changelog\\]\\(http://127\\.0\\.0\\.1:${sitePort()}/changelog\\)`));
  assert.ok(!sent.content.includes("Sign in"), "navigation is left out");
  assert.ok(!sent.content.includes(TOKEN) && sent.content.includes("[redacted]"), `the secret is redacted: ${sent.content}`);
  assert.equal(toolResultSent("toolu_web2").content, sent.content);
  assert.equal(requests.length, before + 1, "two calls, one request");
  assert.ok(!r.stdout.includes(TOKEN));
});

test("web_fetch refuses loopback and private addresses by default, with a clear tool error, and sends nothing", async () => {
  const sb = makeSandbox(llm.url);
  const before = requests.length;
  const urls = [`http://127.0.0.1:${sitePort()}/`, `http://localhost:${sitePort()}/`, "http://[::ffff:169.254.169.254]/latest/meta-data/", "http://10.0.0.1/"];
  llm.enqueue({ toolCalls: urls.map((url, i) => ({ id: `toolu_local${i}`, name: "web_fetch", input: { url } })) }, { text: "Refused." });
  const r = await sb.run(["run", "--headless", "--model", MODEL, "--permission-mode", "auto", "fetch local things"]);
  assert.equal(r.code, 0, r.stderr);
  const results = parseLines(r.stdout).filter((l) => l.kind === "tool-result");
  assert.equal(results.length, urls.length);
  for (const result of results) {
    assert.equal(result.is_error, true);
    assert.match(result.result, /^Not fetched: .*(loopback|private|link-local).*web\.allowedDomains of the user's Keen config\.$/);
  }
  assert.match(results[1]!.result, /localhost resolves to 127\.0\.0\.1, loopback/);
  assert.match(results[2]!.result, /::ffff:a9fe:a9fe \(169\.254\.169\.254\) is a link-local address/);
  assert.equal(requests.length, before);
});

test("ask mode over stdio: a host is asked about once (allow always), goes through HTTPS_PROXY; read-only refuses a host the config does not allow", async () => {
  const sb = makeSandbox(llm.url);
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  // The provider's own traffic to the mock model stays direct (NO_PROXY); the fetched host goes through the proxy.
  const env = { ...sb.env, HTTPS_PROXY: proxyUrl, HTTP_PROXY: proxyUrl, NO_PROXY: "127.0.0.1,localhost" };
  const client = startStdio(["--model", MODEL, "--permission-mode", "ask"], env, sb.workspace, 120_000);
  try {
    const host = "93.184.215.14"; // Public, so not refused; never contacted: the proxy answers for it.
    llm.enqueue(
      { toolCalls: [{ id: "toolu_ask1", name: "web_fetch", input: { url: `http://${host}/notes` } }] },
      { toolCalls: [{ id: "toolu_ask2", name: "web_fetch", input: { url: `http://${host}/other` } }] },
      { text: "Fetched twice." },
    );
    client.send({ kind: "prompt", id: "p1", text: "fetch the notes" });
    const asked = await client.next((l) => l.kind === "permission-request");
    assert.equal(asked.tool_name, `web:${host}`);
    assert.equal(asked.tool_call_id, "toolu_ask1");
    assert.equal(asked.tool_kind, "network");
    assert.equal(asked.title, `Fetch http://${host}/notes`);
    assert.deepEqual(JSON.parse(asked.input), { host, call: "web_fetch", url: `http://${host}/notes` });
    client.send({ kind: "permission-response", request_id: asked.request_id, decision: "allow-always" });
    const done = await client.response("p1");
    assert.equal(done.ok, true, JSON.stringify(done));
    const after1 = client.lines.filter((l) => l.kind === "permission-request");
    assert.equal(after1.length, 1, "the second fetch from the host was not asked about");
    // The rule is internal (stored, not streamed); that the second fetch was not asked about shows it.
    assert.ok((await sb.show(done.data.session_id)).events.some((e) => e.kind === "permission-rule" && e.tool_name === `web:${host}` && e.decision === "allow"));
    for (const id of ["toolu_ask1", "toolu_ask2"]) assert.match(toolResultSent(id).content, /^## Upgrading$/m);
    assert.deepEqual(tunnels.slice(-2), [`${host}:80`, `${host}:80`]);

    llm.enqueue({ toolCalls: [{ id: "toolu_ro", name: "web_fetch", input: { url: "http://93.184.216.99/x" } }] }, { text: "Could not." });
    client.send({ kind: "set-permission-mode", id: "m1", mode: "read-only" });
    client.send({ kind: "prompt", id: "p2", text: "fetch in read-only" });
    await client.response("p2");
    const refused = toolResultSent("toolu_ro");
    assert.equal(refused.is_error, true);
    assert.match(refused.content, /^Not fetched: 93\.184\.216\.99 was not fetched: the session is in read-only mode, which fetches only from hosts the config allows; add it to web\.allowedDomains/);
    assert.equal(client.lines.filter((l) => l.kind === "permission-request").length, 1, "read-only asks nobody");
  } finally {
    await client.end();
  }
});

test("a project's .keen/config.json cannot allow hosts for web_fetch: exit 2 with a clear message", async () => {
  const sb = makeSandbox(llm.url);
  mkdirSync(join(sb.workspace, ".keen"));
  writeFileSync(join(sb.workspace, ".keen", "config.json"), JSON.stringify({ web: { allowedDomains: ["127.0.0.1"] } }));
  const r = await sb.run(["run", "--no-stdin", "--model", MODEL, "hi"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /"web" is not allowed in a project config .*web_fetch settings belong in your own config/);
  assert.equal(r.stdout, "");
});
