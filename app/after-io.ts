/**
 * Resolves after the event loop has polled for I/O once, waiting up to a millisecond for it. Why: the store's
 * LevelDB operations go through the thread pool in steps (classic-level's open is a mkdir, then the open itself),
 * and each step is issued from a callback on the main thread. Work that holds the main thread for tens of ms (loading
 * the SDK and Node's fetch, building a request) started right after a step was issued leaves the next step, often the
 * slow one, waiting behind it; started after this, the step is already on the thread pool and runs underneath.
 * A scheduling hint only: nothing depends on the I/O having progressed, and it costs at most a millisecond.
 */
export function afterIO(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setTimeout(resolve, 1)));
}
