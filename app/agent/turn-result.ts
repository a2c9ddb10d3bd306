import type { ErrorCode } from "../../protocol/responses.js";
import type { RunResult } from "../../protocol/result.js";
import { costUsd, type ModelPrice } from "../../protocol/usage.js";
import type { TurnPolicy } from "./policy.js";
import type { TurnOutcome } from "./turn.js";
import { verdictOf, type StopReason } from "./verdict.js";

/** What the engine knows when a turn has ended. */
export interface TurnEnd {
  sessionId: string;
  outcome: TurnOutcome;
  policies: TurnPolicy[];
  stop?: { reason: StopReason; message?: string };
  started: number;
  /** The model's context window. */
  window: number;
  /** The model's list price; without it the result has no `cost_usd`. */
  price?: ModelPrice;
}

/**
 * The turn's `result`: the answer (a policy such as structured output may
 * replace the model's text), the verdict, and context accounting — the last
 * request's input tokens (cache reads and writes are already in them) plus
 * its output, against the model's window. `error` is the verdict's own error,
 * to emit as an `error` event before the result.
 */
export function buildResult(end: TurnEnd): { result: RunResult; error?: string; code?: ErrorCode } {
  const { outcome } = end;
  const answer = end.policies.map((p) => p.answer?.()).find((a) => a !== undefined);
  const text = answer ? answer.text : outcome.text;
  const verdict = verdictOf(outcome.status, text, end.stop, answer?.failure);
  const last = outcome.lastUsage;
  const result: RunResult = {
    session_id: end.sessionId,
    opencode_session_id: end.sessionId.replaceAll("-", ""),
    text,
    status: verdict.status,
    is_error: verdict.isError,
    errors: verdict.error ? [...outcome.errors, verdict.error] : outcome.errors,
    num_turns: outcome.steps,
    duration_ms: Date.now() - end.started,
    usage: outcome.usage,
    ...(outcome.costUsd === null ? {} : outcome.costUsd !== undefined ? { cost_usd: outcome.costUsd } : end.price ? { cost_usd: costUsd(outcome.usage, end.price) } : {}),
    ...(last ? { context: { used: last.input_tokens + last.output_tokens, window: outcome.contextWindow ?? end.window } } : {}),
    ...(outcome.stopReason ? { stop_reason: outcome.stopReason } : {}),
    ...(answer && "value" in answer && answer.value !== undefined ? { structured_output: answer.value } : {}),
  };
  return { result, error: verdict.error, code: verdict.code };
}
