import type { Provider, ProviderEvent, ProviderRequest, ProviderFailure } from "../../protocol/provider.js";

/** Keen's one retry policy (the SDKs' own retries are off). */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** Total time spent waiting between attempts, at most. */
  maxWaitMs: number;
  /** A stream that brings no event for this long is stalled: abort and retry. */
  idleTimeoutMs: number;
  /** First backoff delay; doubles per retry. */
  baseDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxRetries: 4, maxWaitMs: 30_000, idleTimeoutMs: 90_000, baseDelayMs: 1_000 };

/** A provider event tagged with the attempt (1-based) that produced it. */
export type AttemptEvent =
  | { type: "event"; attempt: number; event: ProviderEvent }
  | { type: "retry"; attempt: number; reason: string; delayMs: number };

/**
 * Streams one step with retries. Contract: never throws; yields each attempt's
 * events, a `retry` marker before every new attempt (its `attempt` is the new
 * attempt's number: deltas of earlier attempts are void), and ends after the
 * first `done`, or after an `error` that is final (not retryable, budget spent,
 * or the run was aborted).
 */
export async function* streamWithRetry(
  provider: Provider,
  request: ProviderRequest,
  policy: RetryPolicy,
  signal: AbortSignal,
  sleep: (ms: number, signal: AbortSignal) => Promise<void> = abortableSleep,
): AsyncGenerator<AttemptEvent> {
  let waited = 0;
  for (let attempt = 1; ; attempt++) {
    const failure: ProviderFailure | undefined = yield* oneAttempt(provider, request, policy, signal, attempt);
    if (!failure) return;
    if (signal.aborted || !failure.retryable || attempt > Math.min(policy.maxRetries, failure.maxRetries ?? Infinity)) return;
    const backoff = policy.baseDelayMs * 2 ** (attempt - 1) * (0.8 + Math.random() * 0.4);
    const delay = Math.round(Math.min(failure.retryAfterMs ?? backoff, policy.maxWaitMs - waited));
    if (delay < 0 || (failure.retryAfterMs ?? 0) > policy.maxWaitMs - waited) return;
    waited += delay;
    yield { type: "retry", attempt: attempt + 1, reason: failure.message, delayMs: delay };
    await sleep(delay, signal);
    if (signal.aborted) return;
  }
}

/** Runs one attempt under the idle watchdog; returns the failure to retry, if any. */
async function* oneAttempt(
  provider: Provider,
  request: ProviderRequest,
  policy: RetryPolicy,
  runSignal: AbortSignal,
  attempt: number,
): AsyncGenerator<AttemptEvent, ProviderFailure | undefined> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(runSignal.reason);
  // A run aborted before this attempt started (SIGINT, a reader gone) fires no more `abort` events.
  if (runSignal.aborted) onAbort();
  else runSignal.addEventListener("abort", onAbort, { once: true });
  let stalled = false;
  const iterator = provider.stream(request, controller.signal)[Symbol.asyncIterator]();
  try {
    let pending = iterator.next();
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const idle = new Promise<"idle">((resolve) => {
        timer = setTimeout(() => resolve("idle"), policy.idleTimeoutMs);
      });
      const next = stalled ? await pending : await Promise.race([pending, idle]);
      clearTimeout(timer);
      if (next === "idle") {
        // The provider ends with an "aborted" error once its signal fires.
        stalled = true;
        controller.abort(new Error("stalled"));
        continue;
      }
      if (next.done) {
        return { message: "provider stream ended without a result", retryable: true };
      }
      let event = next.value;
      if (event.type === "error" && stalled) {
        event = { type: "error", failure: { message: `stream stalled: no data for ${+(policy.idleTimeoutMs / 1000).toFixed(1)}s`, retryable: true } };
      }
      yield { type: "event", attempt, event };
      if (event.type === "done") return undefined;
      if (event.type === "error") return event.failure;
      pending = iterator.next();
    }
  } finally {
    runSignal.removeEventListener("abort", onAbort);
  }
}

/** Sleeps, waking early when the signal aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
