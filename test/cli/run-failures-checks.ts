import assert from "node:assert/strict";

// The JSON result of a failed `keen run`, for test/cli/run-failures.test.ts and test/e2e/run-failures.test.ts.

export const ZERO_USAGE = { input_tokens: 0, cached_tokens: 0, cache_write_tokens: 0, output_tokens: 0, reasoning_tokens: 0, total_tokens: 0 };

/** The JSON result with run-dependent fields fixed. */
export function resultOf(stdout: string) {
  const lines = stdout.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, `exactly one object on stdout: ${stdout}`);
  const r = JSON.parse(lines[0]!);
  assert.equal(r.opencode_session_id, r.session_id.replaceAll("-", ""));
  return { ...r, session_id: "<id>", opencode_session_id: "<id>", duration_ms: 0 };
}

/** An error result; the default model has a list price, so `cost_usd` is always there (0 for no usage). */
export function failed(errors: string[], usage = ZERO_USAGE, num_turns = 0, cost_usd = 0) {
  return {
    session_id: "<id>", opencode_session_id: "<id>", text: "", status: "error", is_error: true,
    errors, num_turns, duration_ms: 0, usage, cost_usd,
  };
}
