/**
 * THE mock LLM HTTP server for Keen's tests: speaks the real Anthropic and
 * OpenAI streaming wire formats, so the official SDKs can be pointed at it.
 *
 * Usage:
 *   const server = await startMockLLMServer();           // 127.0.0.1, free port
 *   server.enqueue({ text: "Hello" }, { toolCalls: [{ name: "read", input: { path: "a" } }] });
 *   // Anthropic SDK: baseURL = server.anthropicBaseURL  (POST /v1/messages)
 *   // OpenAI SDK:    baseURL = server.openaiBaseURL     (POST /v1/chat/completions)
 *   ...
 *   assert.deepEqual(server.unexpected, []);              // no request found the queue empty
 *   assert.equal(server.pending(), 0);                     // every scripted step was used
 *   server.requests[0].body                                // every request, parsed JSON
 *   server.reset();                                        // between tests sharing one server
 *   await server.close();
 *
 * `startMockLLMServer({ refuse: ["max_tokens"] })` plays a model that rejects
 * those OpenAI body parameters with a 400, as reasoning models do.
 *
 * Steps are vendor-neutral and consumed one per request, whichever endpoint
 * is hit. A `reply` step streams, in order: thinking, redacted thinking,
 * text, tool calls, then the stop reason ("tool_use"/"tool_calls" when there
 * are tool calls) and usage. An `http-error` step answers with a status and
 * the vendor's error JSON.
 *
 * Like the real APIs, the server answers 400 (vendor error JSON) to requests
 * they would refuse, records them in `requests` and `rejected`, and does not
 * consume a step. See `validateAnthropic` / `validateOpenAI` for the rules.
 * A request arriving with the queue empty gets a 500 and is listed in
 * `unexpected`, as is any request to an unknown path.
 *
 * Chunks: the SSE events written for a reply, counted from 0 (Anthropic's
 * message_start and ping are chunks 0 and 1; OpenAI's role chunk is 0).
 * `stallAfterChunks`, `cutAfterChunks`, `endAfterChunks` and
 * `errorAfterChunks` act after that many chunks were written.
 *
 * Proxies: the server also accepts CONNECT (undici's ProxyAgent tunnels even
 * plain-http targets), serves the tunnel itself and records the target in
 * `tunnels`, so `HTTP_PROXY=<server.url>` can be tested end to end.
 *
 * Latency benchmarks: `stampDeltas: true` replaces the text with `stampCount`
 * (default 5) text deltas, each `"@" + sendTimeMs.toFixed(3) + ";"` where
 * sendTimeMs = performance.timeOrigin + performance.now() at the moment the
 * chunk is written (a wall-clock epoch in ms, comparable across processes);
 * with `delayMs` between chunks. Parse with /@([\d.]+);/g.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { validateAnthropic, validateOpenAI } from "./mock-llm-validation.js";

/** Token counts a reply reports. `input` excludes cache reads/writes, as in Anthropic's wire format. */
export interface MockUsage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  reasoning?: number;
}

/**
 * Scripting by request content, for requests whose order is not fixed (parallel subagents):
 * a step with `match` answers only a request whose raw body contains that text (steps are
 * taken in queue order among those that fit; a step without `match` fits any request), and
 * a step with `waitFor` is held until a request whose body contains that text has arrived —
 * a meeting point that only concurrent requests pass (sequential ones would wait forever).
 */
export interface MockStepRouting {
  match?: string;
  waitFor?: string;
}

/** A streamed model reply. */
export interface MockReplyStep extends MockStepRouting {
  kind?: "reply";
  thinking?: string;
  /** Anthropic: the thinking block's signature (default "mock-signature-<n>"). */
  signature?: string;
  /** Anthropic only: a redacted_thinking block with this data. */
  redactedThinking?: string;
  text?: string;
  /** Ids default to "toolu_mock_<n>_<k>" / "call_mock_<n>_<k>"; `rawArguments` is sent verbatim instead of JSON of `input`. */
  toolCalls?: { id?: string; name: string; input?: unknown; rawArguments?: string }[];
  /** Defaults: input 10, output ≈ chars/4, cache 0, reasoning 0. */
  usage?: MockUsage;
  /** Split text, thinking and tool input into deltas of this many chars (default: words; tool JSON 8 chars). */
  chunkSize?: number;
  /** Explicit text deltas (replace `text`). */
  deltas?: string[];
  /** Milliseconds between chunks. */
  delayMs?: number;
  /** Benchmarks: send `stampCount` timestamped text deltas instead of `text` (see header). */
  stampDeltas?: boolean;
  stampCount?: number;
  /** OpenAI: send thinking in this delta field (true = "reasoning_content") instead of inline <think> tags. */
  reasoningField?: boolean | "reasoning_content" | "reasoning";
  /** Stop writing after n chunks and keep the socket open (a hung server). */
  stallAfterChunks?: number;
  /** Destroy the socket after n chunks (a connection reset). */
  cutAfterChunks?: number;
  /** End the response cleanly after n chunks (a truncated stream). */
  endAfterChunks?: number;
  /** Send an in-stream error event after n chunks, then end. */
  errorAfterChunks?: number;
  /** Type of that error (default "overloaded_error" / "server_error"). */
  errorType?: string;
}

/** An HTTP error answer. */
export interface MockHttpErrorStep extends MockStepRouting {
  kind: "http-error";
  status: number;
  headers?: Record<string, string>;
  /** Default: the vendor's error JSON for this status. */
  body?: unknown;
}

/** One scripted answer, consumed by one request. */
export type MockStep = MockReplyStep | MockHttpErrorStep;

/** A request as the server saw it. */
export interface MockRequest {
  method: string;
  path: string;
  vendor: "anthropic" | "openai" | "unknown";
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** Server-wide behaviour. */
export interface MockLLMServerOptions {
  /** OpenAI body parameters the "model" refuses with a 400, e.g. ["max_tokens", "temperature"]. */
  refuse?: string[];
}

/** A running mock server; see the header comment. */
export interface MockLLMServer {
  url: string;
  anthropicBaseURL: string;
  openaiBaseURL: string;
  requests: MockRequest[];
  /** Requests that found the queue empty or hit an unknown path. */
  unexpected: string[];
  /** Requests answered 400 by vendor validation: their path and the error message. */
  rejected: { path: string; message: string }[];
  /** CONNECT targets ("host:port") of clients that used this server as their HTTP proxy. */
  tunnels: string[];
  /** TCP connections accepted so far (a tunnel counts once), e.g. to see a pre-connect arrive before its request. */
  connections(): number;
  enqueue(...steps: MockStep[]): void;
  /**
   * The reply for a request that finds the queue empty, instead of a 500 and an
   * `unexpected` entry (e.g. a peer CLI in the bench that makes extra calls); undefined turns it off.
   */
  setFallback(step: MockStep | undefined): void;
  /** Steps not yet consumed. */
  pending(): number;
  /** Drops queued steps and everything recorded, for the next test. */
  reset(): void;
  close(): Promise<void>;
}

type Vendor = "anthropic" | "openai";
type Chunk = () => string;

/** Starts the server on 127.0.0.1 with a free port. */
const served: string[] = [];

/** Every reply step any mock server of this process has sent, as JSON: what the scripted model asked tools to do. */
export function servedSteps(): readonly string[] {
  return served;
}

/** Forgets the steps served so far: the e2e runner calls it before each file that shares this process, so one file's replies never name what another file's run left behind. */
export function forgetServedSteps(): void {
  served.length = 0;
}

export async function startMockLLMServer(options: MockLLMServerOptions = {}): Promise<MockLLMServer> {
  const queue: MockStep[] = [];
  const requests: MockRequest[] = [];
  const unexpected: string[] = [];
  const rejected: { path: string; message: string }[] = [];
  const tunnels: string[] = [];
  let counter = 0;
  let fallback: MockStep | undefined;
  // Raw bodies of every request so far, and steps waiting for one (`waitFor`).
  const bodies: string[] = [];
  const arrivals: (() => void)[] = [];
  const arrived = async (text: string) => {
    while (!bodies.some((b) => b.includes(text))) await new Promise<void>((resolve) => arrivals.push(resolve));
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const raw = await readBody(req);
    // A proxied request carries an absolute URL; the path is what matters.
    const path = new URL(req.url ?? "/", "http://mock").pathname;
    const vendor: MockRequest["vendor"] =
      path === "/v1/messages" ? "anthropic" : path === "/v1/chat/completions" ? "openai" : "unknown";
    let body: any = raw;
    try {
      body = raw === "" ? undefined : JSON.parse(raw);
    } catch {
      // Kept raw; validation below refuses it.
    }
    requests.push({ method: req.method ?? "", path, vendor, headers: { ...req.headers }, body });
    bodies.push(raw);
    for (const wake of arrivals.splice(0)) wake();
    const line = `${req.method} ${path}`;
    if (vendor === "unknown" || req.method !== "POST") {
      unexpected.push(`${line}: unknown endpoint`);
      return sendJSON(res, 404, { error: { message: `mock LLM server: no endpoint ${line}` } });
    }
    const problem =
      typeof body !== "object" || body === null
        ? "request body must be a JSON object"
        : vendor === "anthropic"
          ? validateAnthropic(body)
          : validateOpenAI(body, options.refuse ?? []);
    if (problem) {
      rejected.push({ path, message: problem });
      return sendJSON(res, 400, errorBody(vendor, 400, problem));
    }
    const index = queue.findIndex((s) => s.match === undefined || raw.includes(s.match));
    const step = index >= 0 ? queue.splice(index, 1)[0] : fallback;
    if (!step) {
      unexpected.push(`${line}: no scripted step left`);
      return sendJSON(res, 500, errorBody(vendor, 500, `mock LLM server: no scripted step left for ${line}`));
    }
    if (step.waitFor !== undefined) await arrived(step.waitFor);
    if (step.kind === "http-error") {
      return sendJSON(res, step.status, step.body ?? errorBody(vendor, step.status, `mock HTTP ${step.status}`), step.headers);
    }
    served.push(JSON.stringify(step));
    const n = ++counter;
    const chunks = vendor === "anthropic" ? anthropicChunks(step, body, n) : openaiChunks(step, body, n);
    await streamChunks(res, chunks, step, vendor);
  };
  const server = http.createServer((req, res) => {
    // A bug in the mock must fail the test that hit it, not crash the runner.
    handle(req, res).catch((err: unknown) => {
      unexpected.push(`${req.method} ${req.url}: mock LLM server error: ${String(err)}`);
      if (!res.headersSent) sendJSON(res, 500, { error: { message: String(err) } });
      else res.destroy();
    });
  });
  // Proxy tests: undici tunnels even plain-http targets through CONNECT; the
  // mock accepts the tunnel and serves it itself, recording the target.
  server.on("connect", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    tunnels.push(req.url ?? "");
    socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) socket.unshift(head);
    server.emit("connection", socket);
  });
  // A tunnel re-emits its own TCP socket as a connection: a set counts each socket once.
  const sockets = new Set<unknown>();
  let connections = 0;
  server.on("connection", (socket: Duplex) => {
    if (!sockets.has(socket)) connections++;
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    anthropicBaseURL: url,
    openaiBaseURL: `${url}/v1`,
    requests,
    unexpected,
    rejected,
    tunnels,
    connections: () => connections,
    enqueue: (...steps) => void queue.push(...steps),
    setFallback: (step) => void (fallback = step),
    pending: () => queue.length,
    reset: () => {
      for (const list of [queue, requests, unexpected, rejected, tunnels, bodies]) list.length = 0;
      fallback = undefined;
      connections = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        // Stalled replies keep sockets open; close() must not wait for them.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let data = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (data += chunk));
    req.on("end", () => resolve(data));
    req.on("error", () => resolve(data));
  });
}

function sendJSON(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

/** The vendor's error JSON for a status. */
export function errorBody(vendor: Vendor, status: number, message: string): unknown {
  if (vendor === "anthropic") {
    const type = ANTHROPIC_ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
    return { type: "error", error: { type, message } };
  }
  const type = status === 429 ? "rate_limit_exceeded" : status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message, type, param: null, code: null } };
}

async function streamChunks(res: http.ServerResponse, chunks: Chunk[], step: MockReplyStep, vendor: Vendor) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  res.flushHeaders();
  let gone = false;
  res.on("close", () => (gone = true));
  for (let i = 0; i <= chunks.length; i++) {
    if (gone) return;
    if (step.stallAfterChunks === i) return;
    if (step.cutAfterChunks === i) return void res.socket?.destroy();
    if (step.endAfterChunks === i) return void res.end();
    if (step.errorAfterChunks === i) return void res.end(streamError(vendor, step.errorType));
    if (i === chunks.length) break;
    if (i > 0 && step.delayMs) await new Promise((r) => setTimeout(r, step.delayMs));
    if (gone) return;
    res.write(chunks[i]!());
  }
  res.end();
}

function streamError(vendor: Vendor, type?: string): string {
  if (vendor === "anthropic") {
    return sse("error", { type: "error", error: { type: type ?? "overloaded_error", message: "Overloaded" } });
  }
  return `data: ${JSON.stringify({ error: { message: "The server had an error", type: type ?? "server_error", param: null, code: null } })}\n\n`;
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** Words with their trailing whitespace (like tokens), or fixed-size pieces. */
function split(text: string, size?: number): string[] {
  if (text === "") return [];
  if (size && size > 0) {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
    return out;
  }
  return text.split(/(?<=\s)(?=\S)/);
}

/** Text deltas as thunks, so a stamp is taken when its chunk is written. */
function textDeltas(step: MockReplyStep): Chunk[] {
  if (step.stampDeltas) {
    const stamp = () => `@${(performance.timeOrigin + performance.now()).toFixed(3)};`;
    return Array.from({ length: step.stampCount ?? 5 }, () => stamp);
  }
  return (step.deltas ?? split(step.text ?? "", step.chunkSize)).map((d) => () => d);
}

function usageOf(step: MockReplyStep) {
  const chars = (step.text ?? step.deltas?.join("") ?? "").length + (step.thinking ?? "").length;
  return {
    input: step.usage?.input ?? 10,
    output: step.usage?.output ?? Math.max(1, Math.ceil(chars / 4)),
    cacheRead: step.usage?.cacheRead ?? 0,
    cacheWrite: step.usage?.cacheWrite ?? 0,
    reasoning: step.usage?.reasoning ?? 0,
  };
}

function anthropicChunks(step: MockReplyStep, body: any, n: number): Chunk[] {
  const u = usageOf(step);
  const out: Chunk[] = [];
  const push = (event: string, data: unknown) => out.push(() => sse(event, data));
  push("message_start", {
    type: "message_start",
    message: {
      id: `msg_mock_${n}`,
      type: "message",
      role: "assistant",
      model: body.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: u.input, cache_creation_input_tokens: u.cacheWrite, cache_read_input_tokens: u.cacheRead, output_tokens: 1 },
    },
  });
  push("ping", { type: "ping" });
  let index = 0;
  const block = (start: unknown, deltas: (() => unknown)[]) => {
    const i = index++;
    push("content_block_start", { type: "content_block_start", index: i, content_block: start });
    for (const delta of deltas) out.push(() => sse("content_block_delta", { type: "content_block_delta", index: i, delta: delta() }));
    push("content_block_stop", { type: "content_block_stop", index: i });
  };
  if (step.thinking !== undefined) {
    const pieces = split(step.thinking, step.chunkSize).map((t) => () => ({ type: "thinking_delta", thinking: t }));
    const signature = step.signature ?? `mock-signature-${n}`;
    block({ type: "thinking", thinking: "", signature: "" }, [...pieces, () => ({ type: "signature_delta", signature })]);
  }
  if (step.redactedThinking !== undefined) block({ type: "redacted_thinking", data: step.redactedThinking }, []);
  const texts = textDeltas(step);
  if (texts.length > 0) block({ type: "text", text: "" }, texts.map((t) => () => ({ type: "text_delta", text: t() })));
  (step.toolCalls ?? []).forEach((call, k) => {
    const pieces = split(call.rawArguments ?? JSON.stringify(call.input ?? {}), step.chunkSize ?? 8);
    block(
      { type: "tool_use", id: call.id ?? `toolu_mock_${n}_${k}`, name: call.name, input: {} },
      [() => ({ type: "input_json_delta", partial_json: "" }), ...pieces.map((p) => () => ({ type: "input_json_delta", partial_json: p }))],
    );
  });
  const stop = step.toolCalls?.length ? "tool_use" : "end_turn";
  // The real API repeats the (cumulative) input numbers here: summing would double count.
  push("message_delta", {
    type: "message_delta",
    delta: { stop_reason: stop, stop_sequence: null },
    usage: { input_tokens: u.input, cache_creation_input_tokens: u.cacheWrite, cache_read_input_tokens: u.cacheRead, output_tokens: u.output },
  });
  push("message_stop", { type: "message_stop" });
  return out;
}

function openaiChunks(step: MockReplyStep, body: any, n: number): Chunk[] {
  const u = usageOf(step);
  const out: Chunk[] = [];
  const base = { id: `chatcmpl-mock-${n}`, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: body.model };
  const chunk = (delta: () => unknown, finish: string | null = null) =>
    out.push(() => `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: delta(), logprobs: null, finish_reason: finish }] })}\n\n`);
  chunk(() => ({ role: "assistant", content: "" }));
  if (step.thinking !== undefined) {
    if (step.reasoningField) {
      const field = step.reasoningField === true ? "reasoning_content" : step.reasoningField;
      for (const t of split(step.thinking, step.chunkSize)) chunk(() => ({ [field]: t }));
    } else {
      for (const t of split(`<think>${step.thinking}</think>\n\n`, step.chunkSize)) chunk(() => ({ content: t }));
    }
  }
  for (const t of textDeltas(step)) chunk(() => ({ content: t() }));
  (step.toolCalls ?? []).forEach((call, k) => {
    const id = call.id ?? `call_mock_${n}_${k}`;
    chunk(() => ({ tool_calls: [{ index: k, id, type: "function", function: { name: call.name, arguments: "" } }] }));
    for (const p of split(call.rawArguments ?? JSON.stringify(call.input ?? {}), step.chunkSize ?? 8)) {
      chunk(() => ({ tool_calls: [{ index: k, function: { arguments: p } }] }));
    }
  });
  chunk(() => ({}), step.toolCalls?.length ? "tool_calls" : "stop");
  if (body.stream_options?.include_usage) {
    const prompt = u.input + u.cacheRead + u.cacheWrite;
    const usage = {
      prompt_tokens: prompt,
      completion_tokens: u.output,
      total_tokens: prompt + u.output,
      prompt_tokens_details: { cached_tokens: u.cacheRead },
      completion_tokens_details: { reasoning_tokens: u.reasoning },
    };
    out.push(() => `data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
  }
  out.push(() => "data: [DONE]\n\n");
  return out;
}
