import type { Cassette, Interaction, RecordedError } from "./cassette-format.js";
import { describeMismatch, requestKey } from "./cassette-match.js";
import { HOLD, type SdkFetch } from "./http.js";
import type { ProviderKind } from "./registry.js";

/** Marks a replay failure in an error's cause chain; `classifyFailure` turns it into a final (not retried) provider error. */
export const REPLAY_ERROR_CODE = "KEEN_REPLAY";

/** A request the cassette cannot serve. Thrown from the fake fetch, so it reaches Keen as the provider's error. */
export class ReplayMismatchError extends Error {
  readonly code = REPLAY_ERROR_CODE;
}

/** How a cassette is replayed. */
export interface ReplayOptions {
  cassette: Cassette;
  /** The name shown in messages (the file as given, or `demo`). */
  source: string;
  /** Serve the next recorded response even when the request differs. */
  loose: boolean;
  /** 0: at once; 1: the recorded timing; N: N times faster. */
  speed: number;
  /** Told each difference that `loose` let through. */
  onLoose?: (message: string) => void;
}

/** Serves a process's requests from one cassette, in order, whichever session or provider sends them. */
export interface ReplayPlayer {
  /** A fetch for a provider speaking `kind`'s wire format. */
  fetchFor(kind: ProviderKind): SdkFetch;
  /** Requests served so far. */
  readonly served: number;
}

/**
 * Creates the player. Contract: a request is matched against the next
 * recorded one on wire format, model, tool names and user messages
 * (cassette-match.ts); a mismatch (with `loose`, only of the wire format),
 * or a request past the end, rejects with a ReplayMismatchError
 * and does not advance, so it is reported once and nothing is skipped. The
 * network is never used.
 */
export function createReplayPlayer(options: ReplayOptions): ReplayPlayer {
  const { interactions } = options.cassette;
  let next = 0;
  return {
    get served() {
      return next;
    },
    fetchFor: (kind) => async (_input, init) => {
      // Like a real request (http.ts), a held one is served only after what it must not overtake (the
      // prompt's store write); one aborted meanwhile (that write failed) is never served and takes no number.
      const hold = (init as Record<symbol, Promise<unknown> | undefined> | undefined)?.[HOLD];
      if (hold) await hold.then(noop, noop);
      init?.signal?.throwIfAborted();
      const index = next;
      const recorded = interactions[index];
      const number = index + 1;
      if (!recorded) {
        throw new ReplayMismatchError(
          `replay: ${options.source} holds ${interactions.length} request${interactions.length === 1 ? "" : "s"}; this run sent request ${number}`,
        );
      }
      const difference = describeMismatch(
        requestKey(recorded.request.kind, recorded.request.body),
        requestKey(kind, parseBody(init?.body)),
      );
      // Another wire format cannot be parsed by this SDK: loose matching does not cover it.
      if (difference && (!options.loose || recorded.request.kind !== kind)) {
        const hint = recorded.request.kind === kind ? " (--replay-loose serves it anyway)" : "";
        throw new ReplayMismatchError(`replay: request ${number} does not match ${options.source}: ${difference}${hint}`);
      }
      if (difference) options.onLoose?.(`replay: request ${number} differs from ${options.source}: ${difference}; served anyway (--replay-loose)`);
      next++;
      return serve(recorded, options.speed, init?.signal ?? undefined);
    },
  };
}

/** Plays one recorded response back: headers, then each chunk at its recorded time (scaled by `speed`). */
async function serve(recorded: Interaction, speed: number, signal: AbortSignal | undefined): Promise<Response> {
  const started = performance.now();
  const at = (ms: number) => (speed === 0 ? 0 : Math.max(0, started + ms / speed - performance.now()));
  const { response, chunks, end } = recorded;
  if (!response) {
    // The request itself failed (connection refused, DNS) or never got an answer.
    await sleep(at(end?.ms ?? 0), signal);
    if (end?.error) throw rebuild(end.error);
    await forever(signal);
  }
  await sleep(at(response!.ms), signal);
  const encoder = new TextEncoder();
  let i = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (i < chunks.length) {
          const chunk = chunks[i++]!;
          await sleep(at(chunk.ms), signal);
          controller.enqueue(encoder.encode(chunk.data));
          return;
        }
        if (end && !end.aborted) {
          await sleep(at(end.ms), signal);
          if (end.error) controller.error(rebuild(end.error));
          else controller.close();
          return;
        }
        // Recorded while Keen aborted it, or cut off by a killed process: the stream stalls as it did.
        await forever(signal);
      } catch (error) {
        controller.error(error);
      }
    },
  });
  return new Response(body, { status: response!.status, headers: response!.headers });
}

function parseBody(body: unknown): unknown {
  if (typeof body !== "string") return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** The recorded error again, with its name, code and causes: the SDK and Keen's classifier read those. */
function rebuild(info: RecordedError): Error {
  const error = info.name === "TypeError" ? new TypeError(info.message) : new Error(info.message);
  if (info.name && info.name !== "TypeError" && info.name !== "Error") error.name = info.name;
  if (info.code) (error as Error & { code?: string }).code = info.code;
  if (info.cause) error.cause = rebuild(info.cause);
  return error;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortError(signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Waits until the request is aborted (Keen's idle watchdog, a timeout, a signal). */
function forever(signal: AbortSignal | undefined): Promise<never> {
  return new Promise((_, reject) => {
    if (!signal) return;
    if (signal.aborted) return reject(abortError(signal));
    signal.addEventListener("abort", () => reject(abortError(signal)), { once: true });
  });
}

function noop(): void {}
