import { test, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createRedactor } from "../../../app/permissions/redact.js";
import { fetchPage } from "../../../app/tools/web/fetch-page.js";
import { htmlToMarkdown } from "../../../app/tools/web/html.js";
import type { ToolCallContext, ToolContext } from "../../../app/tools/tool.js";
import { createWebFetchTool, WEB_FETCH_DEFAULTS } from "../../../app/tools/web-fetch.js";

const ARTICLE = readFileSync(join(import.meta.dirname, "../../fixtures/web/article.html"), "utf8");
const SECRET = "sk-live-0123456789abcdef";

/** A local site: what it serves per path, and every request it got. */
const seen: IncomingMessage[] = [];
const server = createServer((req, res) => {
  seen.push(req);
  const path = req.url ?? "/";
  if (path === "/docs/streams") return res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ARTICLE);
  if (path === "/moved") return res.writeHead(301, { location: "/docs/streams" }).end();
  if (path === "/away") return res.writeHead(302, { location: `http://localhost:${port()}/docs/streams` }).end();
  if (path === "/loop") return res.writeHead(302, { location: "/loop" }).end();
  if (path === "/data.json") return res.writeHead(200, { "content-type": "application/json" }).end(`{"token":"${SECRET}","ok":true}`);
  if (path === "/logo.png") return res.writeHead(200, { "content-type": "image/png" }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1]));
  if (path === "/big.txt") return res.writeHead(200, { "content-type": "text/plain" }).end("abcdefghij".repeat(1000));
  if (path === "/latin1") return res.writeHead(200, { "content-type": "text/plain; charset=iso-8859-1" }).end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
  if (path === "/missing") return res.writeHead(404, { "content-type": "text/plain" }).end("no such page");
  if (path === "/hang") return; // Never answers: the timeout ends it.
  res.writeHead(500).end();
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
const port = () => (server.address() as AddressInfo).port;
const site = (path: string) => `http://127.0.0.1:${port()}${path}`;

const base = { cwd: "/", workspace: "/", guard: {} as ToolContext["guard"], env: {} };
const allowedCtx: ToolContext = { ...base, web: { allowedDomains: ["127.0.0.1"] } };
const call = (extra: Partial<ToolCallContext> = {}): ToolCallContext => ({ signal: new AbortController().signal, ...extra });
const hits = (path: string) => seen.filter((r) => r.url === path).length;

test("HTML to markdown: the article only (no nav, sidebar, footer, script), headings, lists, code, absolute links", () => {
  const { title, markdown } = htmlToMarkdown(ARTICLE, "https://docs.example.com/guide/streams");
  assert.match(title!, /Streams in Keen/);
  assert.match(markdown, /^## Events$/m);
  assert.match(markdown, /^- +text deltas stream as they arrive$/m);
  assert.match(markdown, /```\nkeen run --headless "hello"\n```/);
  assert.match(markdown, /\[protocol\]\(https:\/\/docs\.example\.com\/guide\/protocol\.html#events\)/);
  assert.match(markdown, /\[another site\]\(https:\/\/example\.org\/elsewhere\)/);
  assert.match(markdown, /!\[The stream\]\(https:\/\/docs\.example\.com\/img\/diagram\.png\)/);
  for (const noise of ["Log in", "Buy things", "Privacy", "do-not-show", "color: red"]) assert.ok(!markdown.includes(noise), `no "${noise}" in:\n${markdown}`);
});

test("a page comes back as markdown with its URL and title; the same URL again is served from the session's cache", async () => {
  const tool = createWebFetchTool(allowedCtx);
  assert.equal(tool.kind, "network");
  assert.equal(tool.mutates, false);
  const before = hits("/docs/streams");
  const first = await tool.run({ url: site("/docs/streams") }, call());
  assert.equal(first.is_error, false, first.content);
  assert.match(first.content, new RegExp(`^URL: ${site("/docs/streams")}\nTitle: Streams in Keen`));
  assert.match(first.content, /Content-Type: text\/html \(converted to markdown\)/);
  assert.match(first.content, /^## Events$/m);
  const again = await tool.run({ url: `${site("/docs/streams")}#events` }, call());
  assert.equal(again.content, first.content);
  assert.equal(again.details?.cached, true);
  assert.equal(hits("/docs/streams"), before + 1, "one request for two calls");
  // Another session (another tool instance) has its own cache.
  await createWebFetchTool(allowedCtx).run({ url: site("/docs/streams") }, call());
  assert.equal(hits("/docs/streams"), before + 2);
});

test("redirects within the host are followed; to another host they are reported, not followed", async () => {
  const tool = createWebFetchTool(allowedCtx);
  const moved = await tool.run({ url: site("/moved") }, call());
  assert.equal(moved.is_error, false, moved.content);
  assert.equal(moved.details?.final_url, site("/docs/streams"));
  const before = seen.length;
  const away = await tool.run({ url: site("/away") }, call());
  assert.equal(away.is_error, false);
  assert.match(away.content, new RegExp(`redirects \\(HTTP 302\\) to http://localhost:${port()}/docs/streams, on another host`));
  assert.equal(seen.length, before + 1, "only the redirect itself was requested");
  const loop = await tool.run({ url: site("/loop") }, call());
  assert.equal(loop.is_error, true);
  assert.match(loop.content, /more than 5 redirects/);
});

test("text comes back as it is (in its charset), binary is refused with a note, an HTTP error is an error result", async () => {
  const tool = createWebFetchTool(allowedCtx);
  const latin = await tool.run({ url: site("/latin1") }, call());
  assert.match(latin.content, /\n\ncafé$/);
  const image = await tool.run({ url: site("/logo.png") }, call());
  assert.equal(image.is_error, true);
  assert.match(image.content, /is image\/png \(7 bytes\), not text/);
  const missing = await tool.run({ url: site("/missing") }, call());
  assert.equal(missing.is_error, true);
  assert.match(missing.content, /^HTTP 404[^\n]*\n[\s\S]*no such page$/);
});

test("caps: characters per result with a note and an offset to read on (no new request), bytes read with a note", async () => {
  const tool = createWebFetchTool(allowedCtx, { ...WEB_FETCH_DEFAULTS, maxChars: 3000 });
  const before = hits("/big.txt");
  const first = await tool.run({ url: site("/big.txt") }, call());
  assert.match(first.content, /\[Cut: characters 0-3,000 of 10,000 shown\. For more, call web_fetch again with offset: 3000\.\]$/);
  const last = await tool.run({ url: site("/big.txt"), offset: 9000 }, call());
  assert.match(last.content, /\n\n(abcdefghij){100}\n\n\[Cut: characters 9,000-10,000 of 10,000 shown\.\]$/);
  assert.equal(hits("/big.txt"), before + 1);
  const small = createWebFetchTool(allowedCtx, { ...WEB_FETCH_DEFAULTS, maxBytes: 2048 });
  const read = await small.run({ url: site("/big.txt") }, call());
  assert.match(read.content, /Note: the body is larger than/);
  assert.equal(read.details?.bytes, 2048);
});

test("secrets: redacted from what comes back, and a URL carrying one is never requested", async () => {
  const tool = createWebFetchTool({ ...allowedCtx, redactor: createRedactor([SECRET]) });
  const data = await tool.run({ url: site("/data.json") }, call());
  assert.ok(!data.content.includes(SECRET), data.content);
  assert.match(data.content, /"token":"\[redacted\]"/);
  const before = seen.length;
  const leak = await tool.run({ url: site(`/collect?k=${SECRET}`) }, call());
  assert.equal(leak.is_error, true);
  assert.match(leak.content, /contains one of the user's secrets/);
  assert.equal(seen.length, before);
});

test("hosts: loopback refused before anybody is asked; another host is asked about, and a denial is the result", async () => {
  const tool = createWebFetchTool(base);
  const asked: string[] = [];
  const askHost = async (host: string) => (asked.push(host), { allow: true as const });
  const before = seen.length;
  for (const url of [site("/docs/streams"), `http://localhost:${port()}/docs/streams`, `http://[::ffff:127.0.0.1]:${port()}/`]) {
    const result = await tool.run({ url }, call({ askHost }));
    assert.equal(result.is_error, true);
    assert.match(result.content, /loopback.*web\.allowedDomains/);
  }
  assert.deepEqual(asked, []);
  assert.equal(seen.length, before);
  const denied = await tool.run({ url: "https://93.184.215.14/x" }, call({ askHost: async () => ({ allow: false, reason: "the user said no" }) }));
  assert.deepEqual([denied.is_error, denied.content], [true, "Not fetched: the user said no"]);
  const nobody = await tool.run({ url: "https://93.184.215.14/x" }, call());
  assert.match(nobody.content, /not in web\.allowedDomains.*nobody to ask/);
});

test("the check where the socket connects: a name that resolves to loopback is refused there too", async () => {
  const limits = { lists: { allowed: [], denied: [] }, env: {}, timeoutMs: 20_000, maxBytes: 1024, signal: new AbortController().signal, userAgent: "test" };
  const before = seen.length;
  await assert.rejects(fetchPage(new URL(`http://localhost:${port()}/docs/streams`), limits), /localhost resolves to .*, loopback/);
  assert.equal(seen.length, before);
});

test("a server that never answers ends at the timeout with a clear error", async () => {
  const tool = createWebFetchTool(allowedCtx, { ...WEB_FETCH_DEFAULTS, timeoutMs: 300 });
  const result = await tool.run({ url: site("/hang") }, call());
  assert.equal(result.is_error, true);
  assert.match(result.content, /no complete answer from 127\.0\.0\.1 within 0\.3 s/);
});
