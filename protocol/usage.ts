import type { Usage } from "./messages.js";

// Kept apart from messages.ts so the run path does not construct the message schemas (see kinds.ts).

/** A model's list price in US dollars per million tokens; cache prices default to the input price. */
export interface ModelPrice {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/**
 * Estimated cost of `usage` at `price`, rounded to a millionth of a dollar.
 * `input_tokens` includes cache reads and writes, which are priced on their own.
 */
export function costUsd(usage: Usage, price: ModelPrice): number {
  const fresh = Math.max(0, usage.input_tokens - usage.cached_tokens - usage.cache_write_tokens);
  const dollars = (fresh * price.input + usage.cached_tokens * (price.cacheRead ?? price.input)
    + usage.cache_write_tokens * (price.cacheWrite ?? price.input) + usage.output_tokens * price.output) / 1e6;
  return Math.round(dollars * 1e6) / 1e6;
}

/** Usage with every count at zero. */
export function emptyUsage(): Usage {
  return { input_tokens: 0, cached_tokens: 0, cache_write_tokens: 0, output_tokens: 0, reasoning_tokens: 0, total_tokens: 0 };
}

/** Field-wise sum of two usages. */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    cached_tokens: a.cached_tokens + b.cached_tokens,
    cache_write_tokens: a.cache_write_tokens + b.cache_write_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    reasoning_tokens: a.reasoning_tokens + b.reasoning_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
  };
}
