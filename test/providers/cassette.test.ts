import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, before, beforeEach, test } from "node:test";
import type { Provider, ProviderEvent, ProviderRequest } from "../../protocol/provider.js";
import { createAnthropicProvider } from "../../app/providers/anthropic.js";
import { CASSETTE_VERSION, parseCassette, type CassetteHeader } from "../../app/providers/cassette-format.js";
import { describeMismatch, requestKey } from "../../app/providers/cassette-match.js";
import { createOpenAIProvider } from "../../app/providers/openai.js";
import type { ProviderOptions } from "../../app/providers/options.js";
import { createRecordingFetch, openCassetteWriter } from "../../app/providers/record-fetch.js";
import { HOLD } from "../../app/providers/http.js";
import { createReplayPlayer } from "../../app/providers/replay-fetch.js";
import { createRedactor } from "../../app/permissions/redact.js";
import { startMockLLMServer, type MockLLMServer, type MockStep } from "../fakes/mock-llm-server.js";
import { makeTempDir } from "../temp.js";

let server: MockLLMServer;
let dir: string;
before(async () => {
  server = await startMockLLMServer();
  dir = makeTempDir("keen-cassette-");
});
after(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => server.reset());

const READ = { name: "read_file", description: "Read a file", inputSchema: { type: "object", properties: { path: { type: "string" } } } };
const request = (text: string, tools = [READ]): ProviderRequest => ({
  system: "You are Keen. Working directory: /somewhere", messages: [{ role: "user", content: [{ type: "text", text }] }], tools, sessionId: "s1",
});
const HEADER: CassetteHeader = { type: "cassette", version: 1, keen: "test", created: "2026-01-01T00:00:00Z", provider: "anthropic", model: "m", kind: "anthropic" };

function make(kind: "anthropic" | "openai", extra: Partial<ProviderOptions>): Provider {
  const options: ProviderOptions = {
    kind, model: "m", apiKey: "test-key-123456", maxOutputTokens: 1024, ...extra,
    baseURL: extra.baseURL ?? (kind === "anthropic" ? server.anthropicBaseURL : server.openaiBaseURL),
  };
  return kind === "anthropic" ? createAnthropicProvider(options) : createOpenAIProvider(options);
}

async function collect(p: Provider, req: ProviderRequest): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const e of p.stream(req, new AbortController().signal)) events.push(e);
  return events;
}

/** Records `steps` through the real SDK into a cassette, returning the live events and the cassette text. */
async function record(kind: "anthropic" | "openai", steps: MockStep[], requests: ProviderRequest[], baseURL?: string) {
  server.enqueue(...steps);
  const file = join(dir, `${kind}-${Math.random().toString(36).slice(2)}.jsonl`);
  const writer = openCassetteWriter(file, { ...HEADER, kind }, "fresh");
  const fetch = createRecordingFetch(globalThis.fetch, { kind, writers: () => [writer], redactor: createRedactor([]) });
  const p = make(kind, { fetch, baseURL });
  const live: ProviderEvent[][] = [];
  for (const req of requests) live.push(await collect(p, req));
  writer.close();
  return { live, text: readFileSync(file, "utf8") };
}

function replay(kind: "anthropic" | "openai", text: string, options: { loose?: boolean; speed?: number } = {}) {
  const player = createReplayPlayer({ cassette: parseCassette(text, "test.jsonl"), source: "test.jsonl", loose: options.loose ?? false, speed: options.speed ?? 0 });
  // A base URL where nothing listens: a replay must never use the network.
  return make(kind, { fetch: player.fetchFor(kind), baseURL: kind === "anthropic" ? "http://127.0.0.1:1" : "http://127.0.0.1:1/v1" });
}

for (const kind of ["anthropic", "openai"] as const) {
  test(`${kind}: a replay yields the recorded provider events, an HTTP error included`, async () => {
    const steps: MockStep[] = [
      { kind: "http-error", status: 529, headers: { "retry-after": "0" } },
      { thinking: "Look first.", text: "Reading.", toolCalls: [{ id: "t1", name: "read_file", input: { path: "a.txt" } }], reasoningField: true },
    ];
    const { live, text } = await record(kind, steps, [request("hi"), request("hi")]);
    const lines = text.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(lines[0].type, "cassette");
    assert.deepEqual(lines.map((l) => l.type).slice(0, 4), ["cassette", "request", "response", "chunk"]);
    assert.equal(lines[2].status, 529);
    assert.equal(lines[2].headers["retry-after"], "0");
    const p = replay(kind, text);
    assert.deepEqual([await collect(p, request("hi")), await collect(p, request("hi"))], live);
  });
}

test("a request that failed before any response (connection refused) replays as the same failure", async () => {
  const closed = await freePort();
  const { live, text } = await record("anthropic", [], [request("hi")], `http://127.0.0.1:${closed}`);
  assert.match(JSON.stringify(live[0]), /cannot reach/);
  const end = text.trim().split("\n").map((l) => JSON.parse(l)).find((l) => l.type === "end");
  assert.equal(end.error.cause.code, "ECONNREFUSED");
  const replayed = await collect(replay("anthropic", text), request("hi"));
  const failure = (replayed.at(-1) as Extract<ProviderEvent, { type: "error" }>).failure;
  assert.equal(failure.retryable, true);
  assert.match(failure.message, /connection refused/);
});

test("a mismatch is a final provider error naming what differs, and does not advance", async () => {
  const { text } = await record("anthropic", [{ text: "one" }], [request("first prompt")]);
  const p = replay("anthropic", text);
  const wrong = await collect(p, request("another prompt"));
  assert.deepEqual(wrong.at(-1), {
    type: "error",
    failure: {
      message: 'replay: request 1 does not match test.jsonl: user message 1: the cassette has "first prompt", this run sent "another prompt" (--replay-loose serves it anyway)',
      retryable: false,
    },
  });
  assert.equal((await collect(p, request("first prompt"))).at(-1)!.type, "done");
  const past = (await collect(p, request("first prompt"))).at(-1) as Extract<ProviderEvent, { type: "error" }>;
  assert.equal(past.failure.message, "replay: test.jsonl holds 1 request; this run sent request 2");
  const loose = replay("anthropic", text, { loose: true });
  assert.equal((await collect(loose, request("another prompt"))).at(-1)!.type, "done");
  // Loose never feeds one vendor's stream to the other's SDK.
  const player = createReplayPlayer({ cassette: parseCassette(text, "c"), source: "c", loose: true, speed: 0 });
  const openai = make("openai", { fetch: player.fetchFor("openai"), baseURL: "http://127.0.0.1:1/v1" });
  assert.deepEqual((await collect(openai, request("first prompt"))).at(-1), {
    type: "error",
    failure: { message: "replay: request 1 does not match c: the cassette's request went to an anthropic-format API, this one to an openai-format API", retryable: false },
  });
});

test("a stream Keen aborted (a stall) is recorded as aborted and stalls again on replay until aborted", async () => {
  server.enqueue({ text: "a b c d", stallAfterChunks: 4 });
  const file = join(dir, "stall.jsonl");
  const writer = openCassetteWriter(file, HEADER, "fresh");
  const live = make("anthropic", { fetch: createRecordingFetch(globalThis.fetch, { kind: "anthropic", writers: () => [writer], redactor: createRedactor([]) }) });
  const before = performance.now();
  // Aborted once the first text delta has come (message_start, with the usage checked below, came
  // before it), never on a timer alone: on a loaded machine a fixed wait could end before either.
  const liveEvents = await collectUntilAbort(live, (events) => events.some((e) => e.type === "text-delta"));
  const elapsed = performance.now() - before;
  const text = readFileSync(file, "utf8");
  const { ms, ...end } = JSON.parse(text.trim().split("\n").at(-1)!);
  // When the abort came, counted from the request: within the call, however late a loaded machine sent it.
  assert.ok(ms > 0 && ms <= elapsed + 1, `recorded ${ms} ms of ${elapsed} ms`);
  assert.deepEqual(end, { type: "end", n: 1, aborted: true });
  // The replay gives what was recorded, then stalls: it ends only with the abort sent after it.
  let stalled = false;
  const replayed = await collectUntilAbort(replay("anthropic", text), (events) => {
    stalled = events.length === liveEvents.length - 1;
    return stalled;
  });
  assert.ok(stalled, "the replay waited for the abort");
  assert.deepEqual(replayed, liveEvents);
  // The failure carries the usage message_start reported before the stall.
  const usage = { input_tokens: 10, cached_tokens: 0, cache_write_tokens: 0, output_tokens: 1, reasoning_tokens: 0, total_tokens: 11 };
  assert.deepEqual(replayed.at(-1), { type: "error", failure: { message: "aborted", retryable: false, usage } });
});

/** Streams until `ready(events)` holds, then aborts (a little later, so a stream that would go on could) and collects the rest. */
async function collectUntilAbort(p: Provider, ready: (events: ProviderEvent[]) => boolean): Promise<ProviderEvent[]> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const events: ProviderEvent[] = [];
  for await (const e of p.stream(request("hi"), controller.signal)) {
    events.push(e);
    if (!timer && ready(events)) timer = setTimeout(() => controller.abort(), 50);
  }
  clearTimeout(timer);
  return events;
}

test("speed 1 keeps the recorded pacing", async () => {
  const { text } = await record("openai", [{ text: "a b c d e", delayMs: 60 }], [request("hi")]);
  const lastMs = Math.max(...text.trim().split("\n").map((l) => JSON.parse(l)).filter((l) => l.type === "chunk").map((l) => l.ms));
  assert.ok(lastMs >= 5 * 60 * 0.9, `recorded span ${lastMs} ms`);
  const started = performance.now();
  await collect(replay("openai", text, { speed: 1 }), request("hi"));
  assert.ok(performance.now() - started >= lastMs * 0.9, "replayed no faster than recorded");
});

test("request keys: model, tool names and user text only; [redacted] matches any text", () => {
  const anthropic = requestKey("anthropic", {
    model: "m", system: "cwd: /a", tools: [{ name: "bash" }, { name: "read_file" }],
    messages: [
      { role: "user", content: [{ type: "text", text: "fix it" }] },
      { role: "assistant", content: [{ type: "text", text: "ok" }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "x", content: "file body" }] },
    ],
  });
  assert.deepEqual(anthropic, { kind: "anthropic", model: "m", tools: ["bash", "read_file"], prompts: ["fix it"], images: [] });
  const openai = requestKey("openai", {
    model: "m", tools: [{ type: "function", function: { name: "bash" } }],
    messages: [{ role: "system", content: "cwd" }, { role: "user", content: "fix it" }, { role: "tool", content: "x" }],
  });
  assert.deepEqual(openai, { kind: "openai", model: "m", tools: ["bash"], prompts: ["fix it"], images: [] });
  const key = (prompts: string[], tools = ["bash"], images: string[] = []) => ({ kind: "openai" as const, model: "m", tools, prompts, images });
  assert.equal(describeMismatch(key(["use [redacted] here"]), key(["use sk-123456789 here"])), undefined);
  assert.match(describeMismatch(key(["a"]), key(["a"], ["bash", "grep"]))!, /tools: .*new: grep/);
  assert.match(describeMismatch(key(["a"]), key(["a", "b"]))!, /user messages: the cassette has 1, this run sent 2/);
  assert.match(describeMismatch(key(["a"]), { ...key(["a"]), model: "n" })!, /^model: the cassette has "m", this run sent "n"$/);
  assert.match(describeMismatch(key(["a"], ["bash"], ["aaa"]), key(["a"], ["bash"], ["bbb"]))!, /^images: the cassette's user messages carry 1 \(aaa\), this run sent 1 \(bbb\)$/);
});

test("request keys: the images of user messages, by digest, the same in both wire formats; a different image is a mismatch", () => {
  const png = Buffer.from("not really a png, only its bytes matter here").toString("base64");
  const other = Buffer.from("another image").toString("base64");
  const anthropic = (data: string) => requestKey("anthropic", {
    model: "m", messages: [{ role: "user", content: [{ type: "text", text: "look" }, { type: "image", source: { type: "base64", media_type: "image/png", data } }] }],
  });
  const openai = requestKey("openai", {
    model: "m", messages: [{ role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } }] }],
  });
  assert.equal(anthropic(png).images.length, 1);
  assert.match(anthropic(png).images[0]!, /^[0-9a-f]{12}$/);
  assert.deepEqual(openai.images, anthropic(png).images);
  assert.deepEqual(openai.prompts, ["look"]);
  assert.equal(describeMismatch(anthropic(png), anthropic(png)), undefined);
  assert.match(describeMismatch(anthropic(png), anthropic(other))!, /^images: /);
});

test("parseCassette: header first, newer versions refused, unknown line types skipped, orphans refused", () => {
  const header = JSON.stringify(HEADER);
  const req = JSON.stringify({ type: "request", n: 1, kind: "anthropic", method: "POST", url: "u", headers: {}, body: {} });
  const ok = parseCassette([header, req, '{"type":"note","text":"x"}', '{"type":"end","n":1,"ms":3}', ""].join("\n"), "c");
  assert.equal(ok.interactions.length, 1);
  assert.equal(ok.interactions[0]!.end!.ms, 3);
  assert.throws(() => parseCassette(req, "c"), /c, line 1: a cassette starts with/);
  assert.throws(() => parseCassette(JSON.stringify({ ...HEADER, version: CASSETTE_VERSION + 1 }), "c"), /version 2; this Keen reads version 1/);
  assert.throws(() => parseCassette([header, '{"type":"chunk","n":4,"ms":0,"data":""}'].join("\n"), "c"), /request 4, which has no request line/);
  assert.throws(() => parseCassette([header, "{oops"].join("\n"), "c"), /c, line 2: not JSON/);
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

test("a held request is served only when its hold lets go; one aborted while held is never served and takes no number", async () => {
  const { text } = await record("anthropic", [{ text: "one" }], [request("hi")]);
  const cassette = parseCassette(text, "c");
  const player = createReplayPlayer({ cassette, source: "c", loose: false, speed: 0 });
  const fetch = player.fetchFor("anthropic");
  const body = JSON.stringify(cassette.interactions[0]!.request.body);
  const held = (hold: Promise<unknown>, signal?: AbortSignal) => ({ method: "POST", body, signal, [HOLD]: hold }) as RequestInit;

  let letGo!: () => void;
  const aborted = new AbortController();
  const first = fetch("http://127.0.0.1:1/v1/messages", held(new Promise<void>((r) => (letGo = r)), aborted.signal));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  assert.equal(player.served, 0, "nothing is served while the request is held");
  aborted.abort();
  letGo();
  await assert.rejects(first, { name: "AbortError" });
  assert.equal(player.served, 0);

  let release!: () => void;
  let done = false;
  const second = fetch("http://127.0.0.1:1/v1/messages", held(new Promise<void>((r) => (release = r)))).then((r) => ((done = true), r));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  assert.equal(done, false);
  release();
  assert.equal((await second).status, 200);
  assert.equal(player.served, 1, "the request that left is request 1");
});
