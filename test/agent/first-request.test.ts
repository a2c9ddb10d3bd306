import { test } from "node:test";
import assert from "node:assert/strict";
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { EventDraft } from "../../protocol/events.js";
import type { Provider, ProviderEvent } from "../../protocol/provider.js";
import { runTurn, type TurnOptions } from "../../app/agent/turn.js";
import { createAnthropicProvider } from "../../app/providers/anthropic.js";
import { createOpenAIProvider } from "../../app/providers/openai.js";
import { createFetch, loadUndici, type SdkFetch } from "../../app/providers/http.js";
import { approveAll } from "../fakes/approve-all.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { useRoundTrip } from "../fakes/round-trip.js";

// A turn's first request is built and handed to fetch while its user-message is being stored, and leaves only
// once it is stored (app/agent/turn.ts, ProviderRequest.notBefore, app/providers/http.ts's hold). Here the
// store's write is a promise the test holds, so the order is decided by the test, not by how fast a disk is.

const server = useMockLLMServer();

/** Resolves with "built" once `handed` does, or "not built" if the turn has not built its request within 20 s. */
function builtOrNot(handed: Promise<void>): Promise<"built" | "not built"> {
  let timer: NodeJS.Timeout | undefined;
  // Not a timing assertion: without the overlap the request is never built while the write is held, and this
  // ends the wait so the test fails on its assertion instead of hanging.
  const fallback = new Promise<"not built">((resolve) => (timer = setTimeout(() => resolve("not built"), 20_000)));
  return Promise.race([handed.then(() => "built" as const), fallback]).finally(() => clearTimeout(timer));
}

/**
 * Requests for `origin` handed to a connection, until `stop()`: undici's diagnostics channel for fetch (the proxy's
 * path) and node:http's for app/providers/http-fetch.ts (published once the request has its socket, before its headers).
 */
function watchSent(origin: string) {
  let sent = 0;
  const host = new URL(origin).host;
  const viaFetch = (message: unknown) => {
    const request = (message as { request?: { origin?: unknown } }).request;
    if (String(request?.origin) === origin) sent++;
  };
  const viaHttp = (message: unknown) => {
    const request = (message as { request?: { getHeader?(name: string): unknown } }).request;
    if (request?.getHeader?.("host") === host) sent++;
  };
  subscribe("undici:client:sendHeaders", viaFetch);
  subscribe("http.client.request.start", viaHttp);
  return {
    sent: () => sent,
    stop: () => {
      unsubscribe("undici:client:sendHeaders", viaFetch);
      unsubscribe("http.client.request.start", viaHttp);
    },
  };
}

const roundTrip = useRoundTrip();

function turnOptions(provider: Provider, emit: TurnOptions["emit"], signal = new AbortController().signal): TurnOptions {
  return {
    sessionId: "s1", turnId: "t1", provider, tools: [], system: "sys", history: [],
    user: { role: "user", content: [{ type: "text", text: "hi" }], headless: true },
    emit, requester: approveAll, retry: { maxRetries: 0, maxWaitMs: 1000, idleTimeoutMs: 5000, baseDelayMs: 1 }, signal,
  };
}

/** A provider of `vendor` against the mock, through createFetch's fetch; `handed` resolves when the SDK calls fetch. */
function sdkProvider(vendor: "anthropic" | "openai" = "anthropic", env: NodeJS.ProcessEnv = {}) {
  const real = createFetch(env);
  let called!: () => void;
  const handed = new Promise<void>((resolve) => (called = resolve));
  const fetch: SdkFetch = (input, init) => {
    called();
    return real(input, init);
  };
  const provider = vendor === "anthropic"
    ? createAnthropicProvider({ kind: "anthropic", model: "claude-test", baseURL: server.anthropicBaseURL, apiKey: "test-key", maxOutputTokens: 100, fetch })
    : createOpenAIProvider({ kind: "openai", model: "gpt-test", baseURL: server.openaiBaseURL, apiKey: "test-key", maxOutputTokens: 100, fetch });
  return { provider, handed };
}

// node:http for both SDKs (app/providers/http-fetch.ts); npm undici's fetch and proxy agent with HTTP_PROXY (the mock serves proxied requests too).
const cases = [["anthropic", false], ["openai", false], ["anthropic", true]] as const;
for (const [vendor, proxied] of cases) test(`${vendor}${proxied ? " through HTTP_PROXY" : ""}: the first request is built while the user-message is stored, and sent only once it is stored`, async () => {
  server.enqueue({ deltas: ["Hel", "lo"] });
  // Loaded first, so that a request that was not held would not be late only for waiting on undici's import.
  if (proxied) await loadUndici();
  const { provider, handed } = sdkProvider(vendor, proxied ? { HTTP_PROXY: server.url, NO_PROXY: "" } : {});
  const watch = watchSent(server.url);
  const log: string[] = [];
  let atStore: { built: string; sent: number; requests: number } | undefined;
  try {
    const outcome = await runTurn(turnOptions(provider, async (event: EventDraft) => {
      if (event.kind === "user-message") {
        // The store's write of the user-message: held until the SDK has handed the request to fetch.
        const built = await builtOrNot(handed);
        await roundTrip();
        atStore = { built, sent: watch.sent(), requests: server.requests.length };
        log.push("stored user-message");
      }
      log.push(event.kind);
    }));
    assert.equal(outcome.status, "success", outcome.errors.join("; "));
    assert.equal(outcome.text, "Hello");
  } finally {
    watch.stop();
  }
  assert.deepEqual(atStore, { built: "built", sent: 0, requests: 0 }, "built and handed to fetch during the write, not sent");
  assert.deepEqual(log, ["stored user-message", "user-message", "text", "text-delta", "text-delta", "content-end", "text", "assistant-message", "turn-end"]);
  // Sent once released (the proxy agent's undici reports its headers on the channel twice: its own and the proxy client's).
  assert.ok(watch.sent() > 0);
  assert.equal(server.requests.length, 1);
  assert.equal(server.requests[0]!.path, vendor === "anthropic" ? "/v1/messages" : "/v1/chat/completions");
});

test("a user-message write that fails stops the turn: the request built meanwhile never leaves", async () => {
  server.enqueue({ text: "never sent" });
  const { provider, handed } = sdkProvider();
  const watch = watchSent(server.url);
  const controller = new AbortController();
  const log: string[] = [];
  try {
    const outcome = await runTurn(turnOptions(provider, async (event: EventDraft) => {
      if (event.kind === "user-message") {
        assert.equal(await builtOrNot(handed), "built");
        // As the engine's recorder does with a failed write: the turn is stopped before the emit resumes.
        controller.abort(new Error("store"));
      }
      log.push(event.kind);
    }, controller.signal));
    assert.equal(outcome.status, "interrupted");
    // What the request would have done had it left is moot: give it every chance to reach the server.
    await roundTrip();
  } finally {
    watch.stop();
  }
  assert.equal(watch.sent(), 0, "no request headers were written");
  assert.equal(server.requests.length, 0);
  assert.equal(server.pending(), 1, "the scripted reply is still queued");
  assert.ok(!log.includes("text-delta"));
});

test("a user-message that cannot be emitted lets no request go, and the turn fails as before", async () => {
  server.enqueue({ text: "never sent" });
  const { provider, handed } = sdkProvider();
  const watch = watchSent(server.url);
  try {
    await assert.rejects(runTurn(turnOptions(provider, async (event: EventDraft) => {
      if (event.kind !== "user-message") return;
      assert.equal(await builtOrNot(handed), "built");
      throw new Error("a subscriber failed");
    })), /a subscriber failed/);
    await roundTrip();
  } finally {
    watch.stop();
  }
  assert.equal(watch.sent(), 0, "no request headers were written");
  assert.equal(server.requests.length, 0);
});

test("storage first: an answer that comes at once is neither stored nor printed before the user-message is stored", async () => {
  // A provider that ignores notBefore and answers at once: the turn's own ordering must still hold.
  let started!: () => void;
  const streaming = new Promise<void>((resolve) => (started = resolve));
  const provider: Provider = {
    providerId: "instant", model: "m",
    async *stream(): AsyncIterable<ProviderEvent> {
      started();
      yield { type: "text-delta", text: "fast" };
      yield { type: "text-end" };
      const usage = { input_tokens: 1, cached_tokens: 0, cache_write_tokens: 0, output_tokens: 1, reasoning_tokens: 0, total_tokens: 2 };
      yield { type: "done", message: { role: "assistant", content: [{ type: "text", text: "fast" }] }, usage, stopReason: "end_turn" };
    },
  };
  const stored: string[] = [];
  const printed: string[] = [];
  let userStored = false;
  const outcome = await runTurn(turnOptions(provider, async (event: EventDraft) => {
    // The engine's emit: stored (a slow write for the user-message, released once the answer has started), then printed.
    if (event.kind === "user-message") {
      assert.equal(await builtOrNot(streaming), "built", "the provider was asked while the user-message was written");
      await roundTrip();
      userStored = true;
    } else {
      assert.ok(userStored, `${event.kind} reached the store before the user-message was stored`);
    }
    stored.push(event.kind);
    printed.push(event.kind);
  }));
  assert.equal(outcome.status, "success");
  assert.deepEqual(printed, ["user-message", "text", "text-delta", "content-end", "text", "assistant-message", "turn-end"]);
  assert.deepEqual(stored, printed);
});
