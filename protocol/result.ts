import * as z from "zod";
import { UsageSchema } from "./messages.js";

/** How a run ended. `max_turns`: the step limit was reached (see README). */
export const RunStatusSchema = z.enum(["success", "error", "interrupted", "max_turns"]);
export type RunStatus = z.infer<typeof RunStatusSchema>;

/** The run result: `keen run --format json` prints it, the JSONL `result` line carries it. */
export const RunResultSchema = z.object({
  session_id: z.string(),
  /** The session id without hyphens: the `x-opencode-session` header value. */
  opencode_session_id: z.string(),
  text: z.string(),
  status: RunStatusSchema,
  is_error: z.boolean(),
  errors: z.array(z.string()),
  /** Steps (model requests) the run made; retries not counted. */
  num_turns: z.number().int(),
  duration_ms: z.number().int(),
  usage: UsageSchema,
  /** Estimated cost in US dollars of `usage` at the model's list price (registry or config); absent when the price is unknown. */
  cost_usd: z.number().optional(),
  /** Context used by the turn's last request (its input plus output tokens) and the model's window. */
  context: z.object({ used: z.number().int(), window: z.number().int() }).optional(),
  /** The provider's stop reason of the last step (end_turn, max_tokens, refusal, ...). */
  stop_reason: z.string().optional(),
  /** With `--output-schema`: the validated value. */
  structured_output: z.unknown().optional(),
});
export type RunResult = z.infer<typeof RunResultSchema>;
