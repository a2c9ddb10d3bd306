/**
 * app/providers/http-fetch.ts: the providers' fetch over node:http, against a local server whose every
 * answer the test decides. What the SDKs and app/providers/options.ts rely on from fetch is checked here;
 * the SDKs' own use of it is checked by every provider test against the mock LLM server.
 */
import { after, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { once } from "node:events";
import type { AddressInfo, Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { httpFetch, httpFetchable, type HttpResponse } from "../../app/providers/http-fetch.js";
import { createFetch } from "../../app/providers/http.js";
import { classifyFailure } from "../../app/providers/options.js";
import { closePreconnect, providerAgent } from "../../app/providers/preconnect.js";
import { SdkFormData, SdkHeaders } from "../../app/providers/sdk-globals.js";

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;
let handler: Handler = (_req, res) => res.end("ok");
const connections: Socket[] = [];
const server = http.createServer((req, res) => {
  let body = "";
  req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
  req.on("end", () => handler(req, res, body));
});
server.on("connection", (socket: Socket) => connections.push(socket));
server.listen(0, "127.0.0.1");
await once(server, "listening");
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
after(async () => {
  await closePreconnect();
  server.closeAllConnections();
  server.close();
});

const fetch = (path: string, init: Parameters<typeof httpFetch>[1] = {}) => httpFetch(`${base}${path}`, init, { agentFor: providerAgent });
const drain = async (response: HttpResponse) => {
  const chunks: string[] = [];
  for await (const chunk of response.body!) chunks.push(Buffer.from(chunk as Uint8Array).toString("utf8"));
  return chunks.join("");
};

test("a JSON POST: the server gets the method, headers, length and body; the response reads as fetch's does", async () => {
  handler = (req, res, body) => {
    res.setHeader("X-Echo", `${req.method} ${req.headers["x-api-key"]} ${req.headers["content-length"]} ${req.headers["content-type"]}`);
    res.setHeader("Content-Type", "application/json");
    res.statusCode = 201;
    res.end(JSON.stringify({ got: JSON.parse(body) }));
  };
  const headers = new SdkHeaders({ "X-Api-Key": "k" });
  headers.append("content-type", "application/json");
  const response = await fetch("/v1/messages", { method: "post", headers, body: JSON.stringify({ a: "é" }) });
  assert.equal(response.status, 201);
  assert.equal(response.ok, true);
  assert.equal(response.headers.get("x-echo"), `POST k ${Buffer.byteLength('{"a":"é"}')} application/json`);
  assert.equal(response.headers.get("Content-Type"), "application/json");
  assert.deepEqual(await response.json(), { got: { a: "é" } });
  assert.equal(response.bodyUsed, true);
  await assert.rejects(response.text(), /already been read/);
});

test("an error status is not ok, and its body reads as text", async () => {
  handler = (_req, res) => {
    res.statusCode = 429;
    res.setHeader("retry-after", "2");
    res.end('{"error":"slow down"}');
  };
  const response = await fetch("/x", { headers: { "x-a": "1" } });
  assert.equal(response.ok, false);
  assert.equal(response.status, 429);
  assert.equal(response.headers.get("Retry-After"), "2");
  assert.equal(await response.text(), '{"error":"slow down"}');
});

test("a streamed body arrives chunk by chunk as it is written, and later requests reuse the connection", async () => {
  let next!: () => void;
  handler = (_req, res) => {
    res.write("data: one\n\n");
    next = () => res.end("data: two\n\n");
  };
  const before = connections.length;
  const response = await fetch("/stream");
  const chunks: string[] = [];
  for await (const chunk of response.body!) {
    chunks.push(Buffer.from(chunk as Uint8Array).toString("utf8"));
    if (chunks.length === 1) next();
  }
  assert.deepEqual(chunks, ["data: one\n\n", "data: two\n\n"]);
  handler = (_req, res) => res.end("again");
  assert.equal(await (await fetch("/again")).text(), "again");
  assert.ok(connections.length - before <= 1, "keep-alive: one connection for both");
});

test("a refused connection rejects as fetch does: TypeError('fetch failed') caused by the socket's error", async () => {
  const closed = http.createServer();
  closed.listen(0, "127.0.0.1");
  await once(closed, "listening");
  const port = (closed.address() as AddressInfo).port;
  closed.close();
  await once(closed, "close");
  const error = await httpFetch(`http://127.0.0.1:${port}/v1/messages`, {}, { agentFor: providerAgent }).then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof TypeError && error.message === "fetch failed", String(error));
  const cause = (error as { cause?: { code?: string; port?: number } }).cause;
  assert.equal(cause?.code, "ECONNREFUSED");
  assert.equal(cause?.port, port);
  const failure = classifyFailure(new Error("Connection error.", { cause: error }), undefined, { url: `http://127.0.0.1:${port}`, source: "ANTHROPIC_BASE_URL" });
  assert.match(failure.message, /^cannot reach http:\/\/127\.0\.0\.1:\d+ \(from ANTHROPIC_BASE_URL\): connection refused/);
  assert.equal(failure.retryable, true);
});

test("an abort before the response rejects with the signal's reason and nothing more is sent", async () => {
  let reached = 0;
  let arrived!: () => void;
  const arrival = new Promise<void>((r) => (arrived = r));
  handler = () => {
    reached++;
    arrived();
  };
  const controller = new AbortController();
  const pending = fetch("/slow", { signal: controller.signal });
  // Aborted once the server holds the request (a fixed wait was too short on a loaded CI machine).
  await arrival;
  controller.abort();
  await assert.rejects(pending, { name: "AbortError" });
  const already = new AbortController();
  already.abort(new Error("stopped"));
  await assert.rejects(fetch("/never", { signal: already.signal }), /stopped/);
  assert.equal(reached, 1, "the aborted-before-start request never left");
});

test("an abort during the body ends the stream with the reason", async () => {
  handler = (_req, res) => res.write("data: first\n\n");
  const controller = new AbortController();
  const response = await fetch("/stream", { signal: controller.signal });
  const iterate = (async () => {
    for await (const _chunk of response.body!) controller.abort();
  })();
  await assert.rejects(iterate, { name: "AbortError" });
});

test("a body cut short by the server ends with a network error that the retry policy retries", async () => {
  handler = (req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: partial\n\n");
    setTimeout(() => req.socket.destroy(), 10);
  };
  const response = await fetch("/cut");
  const error = await drain(response).then(() => undefined, (e: unknown) => e);
  assert.ok(error instanceof Error, "the stream failed");
  assert.equal(classifyFailure(new Error("stream failed", { cause: error })).retryable, true, String(error));
});

test("a compressed body (never asked for) is decoded", async () => {
  handler = (req, res) => {
    assert.equal(req.headers["accept-encoding"], undefined);
    res.writeHead(200, { "content-encoding": "gzip" });
    res.end(gzipSync("plain text"));
  };
  assert.equal(await (await fetch("/gz")).text(), "plain text");
});

test("a redirect is followed (by Node's fetch), with the method and body", async () => {
  handler = (req, res, body) => {
    if (req.url === "/old") return res.writeHead(307, { location: "/new" }).end();
    res.end(`${req.method} ${req.url} ${body}`);
  };
  const response = await fetch("/old", { method: "POST", body: "payload" });
  assert.equal(await response.text(), "POST /new payload");
});

test("createFetch makes a request with another kind of body through Node's fetch", async () => {
  handler = (req, res, body) => res.end(`${req.headers["content-type"]} ${body}`);
  assert.equal(httpFetchable(`${base}/form`, { body: new URLSearchParams("a=1") }), false);
  const response = await createFetch({})(`${base}/form`, { method: "POST", body: new URLSearchParams("a=1") });
  assert.equal(await response.text(), "application/x-www-form-urlencoded;charset=UTF-8 a=1");
});

test("SdkHeaders: case-insensitive names, appended values joined, name order, bad names and values refused", () => {
  const headers = new SdkHeaders([["B", "2"], ["a", " 1 "]]);
  headers.append("b", "3");
  assert.equal(headers.get("A"), "1");
  assert.equal(headers.get("b"), "2, 3");
  assert.deepEqual([...headers], [["a", "1"], ["b", "2, 3"]]);
  headers.set("B", "4");
  headers.delete("A");
  assert.deepEqual(Object.fromEntries(headers), { b: "4" });
  assert.equal(headers.has("missing"), false);
  assert.equal(headers.get("missing"), null);
  assert.throws(() => headers.set("bad name", "x"), TypeError);
  assert.throws(() => headers.set("x", "a\r\nb"), TypeError);
  assert.equal(Object.prototype.toString.call(headers), "[object Headers]");
  // Node's own Headers is accepted as input.
  assert.deepEqual([...new SdkHeaders(new Headers({ X: "y" }))], [["x", "y"]]);
});

test("SdkFormData: instanceof is true for a real FormData only, and constructing one makes Node's", () => {
  assert.equal({} instanceof SdkFormData, false);
  assert.equal(new URLSearchParams() instanceof SdkFormData, false);
  const form = new SdkFormData() as FormData;
  assert.ok(form instanceof FormData);
  assert.ok(form instanceof SdkFormData);
});

test("an abort of a compressed response nobody reads is dropped, not an uncaught error", async () => {
  handler = (_req, res) => {
    res.writeHead(200, { "content-encoding": "gzip" });
    res.write(gzipSync("part").subarray(0, 5));
  };
  const controller = new AbortController();
  const response = await fetch("/gz-partial", { signal: controller.signal });
  assert.ok(response.body);
  controller.abort();
  // An 'error' without a listener would fail this test process.
  await new Promise((r) => setTimeout(r, 50));
});
