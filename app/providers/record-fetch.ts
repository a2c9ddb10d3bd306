import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { Redactor } from "../permissions/redact.js";
import type { CassetteHeader, InteractionLine, RecordedError } from "./cassette-format.js";
import { HOLD, type SdkFetch } from "./http.js";
import type { ProviderKind } from "./registry.js";

/** One cassette file being written; numbers its own requests. */
export interface CassetteWriter {
  readonly path: string;
  /** The `n` of the next request in this file. */
  begin(): number;
  write(n: number, line: InteractionLine): void;
  close(): void;
}

/**
 * Opens a cassette file: `fresh` truncates it and writes `header`; `append`
 * adds to an existing file (writing `header` only if it is new or empty).
 * Writes are synchronous: the CLI exits with process.exit right after the
 * result, which would drop buffered writes, and a cassette of a run that was
 * killed mid-stream is exactly the one a bug report needs.
 */
export function openCassetteWriter(path: string, header: CassetteHeader, mode: "fresh" | "append"): CassetteWriter {
  mkdirSync(dirname(path), { recursive: true });
  const existing = mode === "append" && existsSync(path) ? readFileSync(path, "utf8") : "";
  const fd = openSync(path, mode === "fresh" ? "w" : "a", 0o600);
  if (existing.trim() === "") writeSync(fd, `${JSON.stringify(header)}\n`);
  // A line cut short by a killed process must not swallow the next one.
  else if (!existing.endsWith("\n")) writeSync(fd, "\n");
  let n = lastRequest(existing);
  return {
    path,
    begin: () => ++n,
    write(index, line) {
      const { type, ...rest } = line;
      writeSync(fd, `${JSON.stringify({ type, n: index, ...rest })}\n`);
    },
    close: () => closeSync(fd),
  };
}

/** The highest request number in a cassette's text (0 when none). */
function lastRequest(text: string): number {
  let last = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith('{"type":"request"')) continue; // the writer puts `type` first
    try {
      last = Math.max(last, Number(JSON.parse(line).n) || 0);
    } catch {
      // A line cut by a killed process: the next request still gets a fresh number.
    }
  }
  return last;
}

/** Request headers that carry credentials: left out of a cassette entirely. */
const AUTH_HEADERS = new Set(["authorization", "x-api-key", "api-key", "proxy-authorization", "cookie", "x-goog-api-key"]);
/** Response headers a replay needs (content type, what the retry policy and the SDKs read) or a bug report wants. */
const KEPT_RESPONSE_HEADERS = ["content-type", "retry-after", "retry-after-ms", "x-should-retry", "request-id", "x-request-id"];

/** What a recording fetch needs. */
export interface RecordingOptions {
  kind: ProviderKind;
  /** Every file the requests go to (the user's cassette; the session's copy for `sessions export`). */
  writers: () => CassetteWriter[];
  /** Known secrets: applied to the request (URL, headers, body), the response headers, every chunk and error messages. */
  redactor: Redactor;
}

/**
 * Wraps the SDK's fetch: the request goes out unchanged and the response
 * comes back unchanged, while both are written to the cassette — the body
 * as it arrives, with its timing. Contract: recording never changes what
 * the SDK sees, and a failure of the request or the body is rethrown as is.
 * A held request (its init's `HOLD`, http.ts) is written when the hold lets
 * it go, and not at all when it never leaves (its signal aborted by then, or
 * the fetch failed first): a cassette holds only requests that were sent.
 */
export function createRecordingFetch(inner: SdkFetch, options: RecordingOptions): SdkFetch {
  const { redactor } = options;
  return async (input, init) => {
    // Timings count from when the request leaves (a held one waits for the store first).
    let started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    const signal = init?.signal ?? undefined;
    // Set once the request line is written; every later line goes to the same files under the same numbers.
    let lines: ((line: InteractionLine) => void) | undefined;
    const start = () => {
      started = performance.now();
      const writers = options.writers();
      const ns = writers.map((w) => w.begin());
      lines = (line) => writers.forEach((w, i) => w.write(ns[i]!, line));
      const request = input instanceof Request ? input : undefined;
      const headers: Record<string, string> = {};
      for (const [name, value] of new Headers(init?.headers ?? request?.headers)) if (!AUTH_HEADERS.has(name)) headers[name] = value;
      lines(redactor.redactDeep({
        type: "request", kind: options.kind, method: init?.method ?? request?.method ?? "GET", url: String(request?.url ?? input), headers, body: bodyOf(init?.body),
      }));
    };
    let decided = false;
    const decide = () => {
      if (decided) return;
      decided = true;
      // Aborted while held: fetch drops the request when the hold lets go, before a byte is written.
      if (!signal?.aborted) start();
    };
    const hold = (init as Record<symbol, Promise<unknown> | undefined> | undefined)?.[HOLD];
    // Registered before `inner` runs, so it runs before createFetch's own reaction that hands the request to a connection.
    if (hold) void hold.then(decide, decide);
    else decide();
    let response: Response;
    try {
      response = await inner(input, init);
    } catch (error) {
      // Failed while still held: it never left, and nothing of it is written (nor later, by `decide`).
      decided = true;
      lines?.(endLine(ms(), error, signal));
      throw error;
    }
    // An inner fetch that ignored the hold was answered first: the request did leave.
    if (!decided) {
      decided = true;
      start();
    }
    const write = lines ?? (() => {});
    const kept: Record<string, string> = {};
    for (const name of KEPT_RESPONSE_HEADERS) {
      const value = response.headers.get(name);
      if (value !== null) kept[name] = value;
    }
    write({ type: "response", ms: ms(), status: response.status, headers: redactor.redactDeep(kept) });
    if (!response.body) {
      write({ type: "end", ms: ms() });
      return response;
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    // A secret split across two chunks is still caught; its start is held back to the next chunk.
    const redacting = redactor.stream();
    let ended = false;
    const finish = (error?: unknown) => {
      if (ended) return;
      ended = true;
      const rest = redacting.push(decoder.decode()) + redacting.end();
      if (rest) write({ type: "chunk", ms: ms(), data: rest });
      write(error === undefined ? { type: "end", ms: ms() } : endLine(ms(), error, signal));
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (done) {
            finish();
            controller.close();
            return;
          }
          const data = redacting.push(decoder.decode(value, { stream: true }));
          if (data) write({ type: "chunk", ms: ms(), data });
          controller.enqueue(value);
        } catch (error) {
          finish(error);
          controller.error(error);
        }
      },
      cancel(reason) {
        finish(reason ?? new Error("cancelled"));
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };

  function endLine(ms: number, error: unknown, signal: AbortSignal | undefined): InteractionLine {
    if (signal?.aborted) return { type: "end", ms, aborted: true };
    return { type: "end", ms, error: redactor.redactDeep(describe(error)) };
  }
}

/** The body as JSON when it is (both SDKs send JSON strings), else its text. */
function bodyOf(body: unknown): unknown {
  if (typeof body !== "string") return body === undefined || body === null ? null : `[${typeof body} body not recorded]`;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/** An error and its causes, as far as a replay needs them (four levels). */
function describe(error: unknown, depth = 0): RecordedError {
  const e = (error ?? {}) as { name?: unknown; message?: unknown; code?: unknown; cause?: unknown };
  const out: RecordedError = { message: typeof e.message === "string" ? e.message : String(error) };
  if (typeof e.name === "string") out.name = e.name;
  if (typeof e.code === "string") out.code = e.code;
  if (e.cause && depth < 3) out.cause = describe(e.cause, depth + 1);
  return out;
}
