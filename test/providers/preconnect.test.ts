import { afterEach, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { once } from "node:events";
import { closePreconnect, hasPreconnect, preconnect } from "../../app/providers/preconnect.js";
import { createFetch } from "../../app/providers/http.js";

/** An HTTP server that counts TCP connections and answers every request with the connection's number. */
async function countingServer() {
  const sockets: Socket[] = [];
  const server = http.createServer((req, res) => {
    res.end(String(sockets.indexOf(req.socket) + 1));
  });
  server.on("connection", (socket: Socket) => sockets.push(socket));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    sockets,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** Waits until `check` holds, polling on the event loop (connections arrive asynchronously). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 5));
}

// The early connection is process-wide state: these hooks are this file's, inside its suite, so they neither
// clean up after other files of a shared test process (run-shard.mjs) nor hide what those leave open.
describe("preconnect", () => {
  before(() => assert.equal(hasPreconnect(), false, "an earlier test in this process left an early connection open"));
  afterEach(() => closePreconnect());

  test("the early connection is open before any request and the first request uses it", async () => {
    const server = await countingServer();
    try {
      preconnect(server.url, {});
      assert.equal(hasPreconnect(), true);
      await until(() => server.sockets.length === 1);
      const fetch = createFetch({});
      const first = await (await fetch(`${server.url}/v1/messages`)).text();
      assert.equal(first, "1", "the first request went over the early connection");
      assert.equal(server.sockets.length, 1, "and no other was opened for it");
    } finally {
      await server.close();
    }
  });

  test("through Node's fetch too (a cassette's recorder asks for it), the first request uses the early connection", async () => {
    const server = await countingServer();
    try {
      preconnect(server.url, {});
      await until(() => server.sockets.length === 1);
      const fetch = createFetch({}, { web: true });
      assert.equal(await (await fetch(`${server.url}/v1/messages`)).text(), "1");
      assert.equal(server.sockets.length, 1);
    } finally {
      await server.close();
    }
  });

  test("an early connection the server has closed is replaced, and the request succeeds", async () => {
    const server = await countingServer();
    try {
      preconnect(server.url, {});
      await until(() => server.sockets.length === 1);
      server.sockets[0]!.destroy();
      const fetch = createFetch({});
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(await (await fetch(`${server.url}/x`)).text(), "2");
    } finally {
      await server.close();
    }
  });

  test("an unreachable host fails the request as a plain connect would, without an unhandled error", async () => {
    const server = await countingServer();
    const url = server.url;
    await server.close();
    preconnect(url, {});
    const fetch = createFetch({});
    await assert.rejects(fetch(`${url}/x`), (err: Error & { cause?: { code?: string } }) => err.cause?.code === "ECONNREFUSED");
  });

  test("a proxy variable means no early connection", async () => {
    const server = await countingServer();
    try {
      preconnect(server.url, { HTTP_PROXY: "http://127.0.0.1:9" });
      assert.equal(hasPreconnect(), false);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(server.sockets.length, 0);
    } finally {
      await server.close();
    }
  });

  test("a request to another host than the early one connects normally and leaves the early socket alone", async () => {
    const a = await countingServer();
    const b = await countingServer();
    try {
      preconnect(a.url, {});
      await until(() => a.sockets.length === 1);
      const fetch = createFetch({});
      assert.equal(await (await fetch(`${b.url}/x`)).text(), "1");
      assert.equal(await (await fetch(`${a.url}/x`)).text(), "1");
      assert.equal(a.sockets.length, 1);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
