import type { Agent, ClientRequest, IncomingMessage } from "node:http";
import type { Readable } from "node:stream";
import { traceStartup } from "../startup-trace.js";
import { loadNodeFetch } from "../wasm-flags.js";
import { SdkHeaders } from "./sdk-globals.js";

/**
 * The providers' fetch over node:http and node:https instead of Node's fetch. Why: Node's fetch is its
 * bundled undici (~650 KB), 21–30 ms to load at every start on a 2-core machine, where node:http and
 * node:https take ~5, and a run's first request waited for that load (docs/performance.md, "Ninth pass").
 * Both SDKs take any fetch whose response body is async-iterable, which a node stream is.
 *
 * What fetch does that the SDKs and Keen rely on is kept:
 * - a failure before the response rejects with `TypeError("fetch failed")` whose cause is the socket's
 *   own error (its code, address and port: app/providers/options.ts names the endpoint from them);
 * - an abort rejects, or ends the body, with the signal's reason (the SDKs abort with an AbortError);
 * - a body cut short ends the stream with Node's error for it (ECONNRESET, "aborted"): a network error;
 * - a compressed body (never asked for) is decoded; a redirect is handed to Node's fetch, which follows it,
 *   and so is any body but a string or bytes (the SDKs send JSON strings; uploads are not Keen's).
 * `hold`: the request is built and written, and handed to a connection only once it settles.
 */
export interface HttpFetchOptions {
  /** The agent for a URL's protocol (keep-alive; the early socket: app/providers/preconnect.ts). */
  agentFor(protocol: "http:" | "https:"): Agent;
  /** Settles when the request may be handed to a connection (ProviderRequest.notBefore). */
  hold?: Promise<unknown>;
}

/** A response shaped as much like fetch's as the SDKs read it. */
export interface HttpResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly url: string;
  readonly redirected: boolean;
  readonly headers: SdkHeaders;
  readonly body: Readable | null;
  readonly bodyUsed: boolean;
  text(): Promise<string>;
  json(): Promise<unknown>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

type Init = { method?: string; headers?: unknown; body?: unknown; signal?: AbortSignal | null };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** True when `httpFetch` can make this request itself (else it goes to Node's fetch). */
export function httpFetchable(input: unknown, init: Init | undefined): boolean {
  const body = init?.body;
  return (typeof input === "string" || input instanceof URL) && (body === undefined || body === null || typeof body === "string" || body instanceof Uint8Array);
}

export function httpFetch(input: string | URL, init: Init = {}, options: HttpFetchOptions): Promise<HttpResponse> {
  const url = new URL(String(input));
  const signal = init.signal ?? undefined;
  if (url.protocol !== "http:" && url.protocol !== "https:") return Promise.reject(new TypeError("fetch failed", { cause: new Error(`unsupported protocol ${url.protocol}`) }));
  if (signal?.aborted) return Promise.reject(abortError(signal));
  const http = process.getBuiltinModule(url.protocol === "https:" ? "node:https" : "node:http") as typeof import("node:http");
  const base = options.agentFor(url.protocol);
  const agent = options.hold ? heldAgent(base, options.hold) : base;
  const body = init.body === undefined || init.body === null ? undefined : typeof init.body === "string" ? Buffer.from(init.body) : (init.body as Uint8Array);
  const headers: Record<string, string> = {};
  for (const [name, value] of headerPairs(init.headers)) headers[name] = value;
  if (body && headers["content-length"] === undefined) headers["content-length"] = String(body.byteLength);
  const method = (init.method ?? "GET").toUpperCase();

  return new Promise<HttpResponse>((resolve, reject) => {
    let request: ClientRequest;
    try {
      request = http.request(url, { method, headers, agent });
    } catch (error) {
      return reject(new TypeError("fetch failed", { cause: error }));
    }
    let response: IncomingMessage | undefined;
    let stream: Readable | undefined;
    const onAbort = () => {
      const reason = abortError(signal!) as Error;
      request.destroy(reason);
      stream?.destroy(reason);
      if (!response) reject(reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const done = () => signal?.removeEventListener("abort", onAbort);
    request.on("error", (error) => {
      if (response) return;
      done();
      reject(signal?.aborted ? abortError(signal) : new TypeError("fetch failed", { cause: error }));
    });
    request.on("response", (res) => {
      response = res;
      const status = res.statusCode ?? 0;
      if (REDIRECTS.has(status) && res.headers.location) {
        res.resume();
        done();
        // Node's fetch follows it, with the request as given (a redirect is rare on a provider's API).
        loadNodeFetch();
        return resolve(globalThis.fetch(url, { ...(init as RequestInit), method }) as unknown as Promise<HttpResponse>);
      }
      stream = decoded(res);
      stream.once("close", done);
      resolve(makeResponse(url.href, res, method === "HEAD" || status === 204 || status === 304 ? null : stream));
    });
    request.end(body);
  });
}

/** `base` with its hand-over of the request to a connection deferred until `hold` settles. */
function heldAgent(base: Agent, hold: Promise<unknown>): Agent {
  const held = Object.create(base) as Agent & { addRequest(request: ClientRequest, options: unknown): void };
  held.addRequest = (request, options) => {
    traceStartup("request: built, held", true);
    const go = () => {
      traceStartup("request: released", true);
      // A request aborted meanwhile never reaches a connection.
      if (!request.destroyed) (base as unknown as { addRequest(request: ClientRequest, options: unknown): void }).addRequest(request, options);
    };
    hold.then(go, go);
  };
  return held;
}

function* headerPairs(headers: unknown): Iterable<[string, string]> {
  if (!headers) return;
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === "function") {
    for (const [name, value] of headers as Iterable<[string, string]>) yield [name.toLowerCase(), String(value)];
    return;
  }
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (value !== undefined && value !== null) yield [name.toLowerCase(), String(value)];
  }
}

/** The body, through a decoder if the server compressed it anyway. */
function decoded(res: IncomingMessage): Readable {
  const encoding = String(res.headers["content-encoding"] ?? "").trim().toLowerCase();
  if (!encoding || encoding === "identity") return res;
  const zlib = process.getBuiltinModule("node:zlib") as typeof import("node:zlib");
  const decoder = encoding === "gzip" || encoding === "x-gzip" ? zlib.createGunzip() : encoding === "deflate" ? zlib.createInflate() : encoding === "br" ? zlib.createBrotliDecompress() : undefined;
  if (!decoder) return res;
  res.on("error", (error) => decoder.destroy(error));
  // Its error reaches whoever reads the body (their own listener); a body nobody reads drops it, as fetch's does,
  // instead of an 'error' event with no listener ending the process.
  decoder.on("error", () => {});
  return res.pipe(decoder);
}

function makeResponse(url: string, res: IncomingMessage, body: Readable | null): HttpResponse {
  const headers = new SdkHeaders();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
  let used = false;
  const bytes = async (): Promise<Buffer> => {
    if (used) throw new TypeError("Body is unusable: Body has already been read");
    used = true;
    if (!body) return Buffer.alloc(0);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  };
  const status = res.statusCode ?? 0;
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: res.statusMessage ?? "",
    url,
    redirected: false,
    headers,
    body,
    get bodyUsed() {
      return used;
    },
    text: async () => (await bytes()).toString("utf8"),
    json: async () => JSON.parse((await bytes()).toString("utf8")),
    arrayBuffer: async () => {
      const b = await bytes();
      return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
    },
  };
}

/** What fetch rejects with on an abort: the signal's reason, else an AbortError. */
function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}
