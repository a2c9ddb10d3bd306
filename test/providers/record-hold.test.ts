import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { EventDraft } from "../../protocol/events.js";
import { runTurn, type TurnOptions } from "../../app/agent/turn.js";
import { createAnthropicProvider } from "../../app/providers/anthropic.js";
import { createFetch, type SdkFetch } from "../../app/providers/http.js";
import { createRecordingFetch, openCassetteWriter } from "../../app/providers/record-fetch.js";
import { createRedactor } from "../../app/permissions/redact.js";
import { approveAll } from "../fakes/approve-all.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { useRoundTrip } from "../fakes/round-trip.js";
import { makeTempDir } from "../temp.js";

// A turn's first request is handed to fetch while its user-message is stored and leaves once it is stored
// (ProviderRequest.notBefore, http.ts's hold). The recorder writes it into the cassette when it leaves: a store
// that fails meanwhile leaves no request in the cassette that the server never saw. The store's write is a
// promise the test holds (as in test/agent/first-request.test.ts), so the order is the test's, not the disk's.

const server = useMockLLMServer();

const roundTrip = useRoundTrip();

/** A recording provider against the mock; `handed` resolves when the SDK hands a request to the recorder. */
function recording(file: string, env: NodeJS.ProcessEnv = {}) {
  const writer = openCassetteWriter(file, { type: "cassette", version: 1, keen: "test", created: "2026-01-01T00:00:00Z", provider: "anthropic", model: "m", kind: "anthropic" }, "fresh");
  const recorder = createRecordingFetch(createFetch(env, { web: true }), { kind: "anthropic", writers: () => [writer], redactor: createRedactor([]) });
  let called!: () => void;
  const handed = new Promise<void>((resolve) => (called = resolve));
  const fetch: SdkFetch = (input, init) => {
    called();
    return recorder(input, init);
  };
  const provider = createAnthropicProvider({ kind: "anthropic", model: "claude-test", baseURL: server.anthropicBaseURL, apiKey: "test-key", maxOutputTokens: 100, fetch });
  return { provider, handed, writer };
}

/** The cassette's lines after the header, as `type n`. */
function lines(file: string): string[] {
  return readFileSync(file, "utf8").trim().split("\n").slice(1).map((l) => JSON.parse(l) as { type: string; n: number }).map((l) => `${l.type} ${l.n}`);
}

function turn(provider: TurnOptions["provider"], emit: TurnOptions["emit"], signal = new AbortController().signal): Promise<Awaited<ReturnType<typeof runTurn>>> {
  return runTurn({
    sessionId: "s1", turnId: "t1", provider, tools: [], system: "sys", history: [],
    user: { role: "user", content: [{ type: "text", text: "hi" }], headless: true },
    emit, requester: approveAll, retry: { maxRetries: 0, maxWaitMs: 1000, idleTimeoutMs: 5000, baseDelayMs: 1 }, signal,
  });
}

/** Resolves once `handed` does; fails the test if the turn never built its request (no timing assertion: a bound on a hang). */
async function built(handed: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const never = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("the request was never built")), 20_000)));
  await Promise.race([handed, never]).finally(() => clearTimeout(timer));
}

// Node's fetch, and npm undici's fetch through HTTP_PROXY (createFetch loads it before the hold applies; the mock serves proxied requests).
for (const proxied of [false, true]) test(`${proxied ? "through HTTP_PROXY: " : ""}a request is written into the cassette when it leaves, after the user-message is stored`, async () => {
  server.enqueue({ deltas: ["Hel", "lo"] });
  const file = join(makeTempDir("keen-record-hold-"), "c.jsonl");
  const { provider, handed, writer } = recording(file, proxied ? { HTTP_PROXY: server.url, NO_PROXY: "" } : {});
  let whileHeld: string[] | undefined;
  const outcome = await turn(provider, async (event: EventDraft) => {
    if (event.kind !== "user-message") return;
    await built(handed);
    await roundTrip();
    whileHeld = lines(file);
  });
  writer.close();
  assert.equal(outcome.status, "success", outcome.errors.join("; "));
  assert.deepEqual(whileHeld, [], "handed to fetch, not yet sent: not in the cassette");
  const after = lines(file);
  assert.deepEqual([after[0], after[1], after.at(-1)], ["request 1", "response 1", "end 1"]);
  assert.equal(server.requests.length, 1);
});

test("a user-message write that fails: the request built meanwhile never leaves and is not in the cassette; the next one is request 1", async () => {
  server.enqueue({ text: "never sent" });
  const file = join(makeTempDir("keen-record-hold-"), "c.jsonl");
  const { provider, handed, writer } = recording(file);
  const controller = new AbortController();
  const outcome = await turn(provider, async (event: EventDraft) => {
    if (event.kind !== "user-message") return;
    await built(handed);
    // As the engine's recorder does with a failed write: the turn is stopped before the emit resumes.
    controller.abort(new Error("store"));
  }, controller.signal);
  assert.equal(outcome.status, "interrupted");
  await roundTrip();
  assert.equal(server.requests.length, 0);
  assert.deepEqual(lines(file), [], "no request, no end line");

  // The same cassette records the next turn's request from 1: no gap for the one that never left.
  server.reset();
  server.enqueue({ text: "sent" });
  const next = await turn(provider, async () => {});
  writer.close();
  assert.equal(next.status, "success", next.errors.join("; "));
  assert.deepEqual(lines(file).filter((l) => l.startsWith("request")), ["request 1"]);
});

test("a user-message that cannot be emitted (a subscriber throws): nothing of the request is in the cassette", async () => {
  server.enqueue({ text: "never sent" });
  const file = join(makeTempDir("keen-record-hold-"), "c.jsonl");
  const { provider, handed, writer } = recording(file);
  await assert.rejects(turn(provider, async (event: EventDraft) => {
    if (event.kind !== "user-message") return;
    await built(handed);
    throw new Error("a subscriber failed");
  }), /a subscriber failed/);
  await roundTrip();
  writer.close();
  assert.equal(server.requests.length, 0);
  assert.deepEqual(lines(file), []);
});
