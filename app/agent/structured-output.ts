import type { Tool } from "../tools/tool.js";
import type { TurnPolicy } from "./policy.js";

/** Name of the tool the model answers through when `--output-schema` is given. */
export const STRUCTURED_OUTPUT_TOOL = "structured_output";

/** Repair round-trips allowed after an invalid value (or an answer without the call). */
const MAX_REPAIRS = 2;

/** Validates a value; returns error text or undefined when valid. */
export type SchemaCheck = (value: unknown) => string | undefined;

/** The structured-output policy for one turn. */
export interface StructuredOutput extends TurnPolicy {
  tool: Tool;
  /** Extra system-prompt paragraph. */
  instructions: string;
  /** The accepted value, once the model produced a valid one. */
  value(): { value: unknown } | undefined;
  /** Set when the repair budget ran out. */
  failure(): string | undefined;
  afterTools(): "continue" | "stop";
  onAnswer(text: string): string | undefined;
}

/**
 * Makes the run's answer a JSON value valid against the user's schema: the
 * model calls `structured_output` with it (tool_choice stays auto: Anthropic
 * refuses forced tool use with thinking on). Invalid values get the validator's
 * errors back, up to 2 repair round-trips, then the run fails.
 */
export function createStructuredOutput(schema: Record<string, unknown>, check: SchemaCheck): StructuredOutput {
  const wrapped = schema.type !== "object";
  let accepted: { value: unknown } | undefined;
  let repairs = 0;
  let failure: string | undefined;
  const spend = (why: string): string | undefined => {
    if (repairs >= MAX_REPAIRS) {
      failure = `structured output: no valid value after ${MAX_REPAIRS} repairs (${why})`;
      return undefined;
    }
    repairs++;
    return why;
  };
  const tool: Tool = {
    // Handing over the answer changes nothing: never asked about, even in read-only mode.
    kind: "read",
    describe: () => ({ title: "Give the answer", locations: [] }),
    definition: {
      name: STRUCTURED_OUTPUT_TOOL,
      description: "Give your final answer as a JSON value valid against this tool's input schema. Call it exactly once, when you have the answer; do not write the answer as text.",
      inputSchema: wrapped ? { type: "object", properties: { value: schema }, required: ["value"], additionalProperties: false } : schema,
    },
    async run(input) {
      const value = wrapped ? (input as { value?: unknown } | undefined)?.value : input;
      const errors = check(value);
      if (!errors) {
        accepted ??= { value };
        return { content: "Accepted.", is_error: false, details: { value } };
      }
      const repair = spend(errors);
      return {
        content: repair ? `Invalid value: ${errors}. Call structured_output again with a corrected value.` : `Invalid value: ${errors}.`,
        is_error: true,
      };
    },
  };
  return {
    tool,
    instructions: `Answer format: this run needs its answer as JSON. When you have the answer, call the ${STRUCTURED_OUTPUT_TOOL} tool with it${wrapped ? ' (as its "value" field)' : ""}; the value must be valid against the tool's schema. Do not write the answer as plain text.`,
    value: () => accepted,
    failure: () => failure,
    afterTools: () => (accepted || failure ? "stop" : "continue"),
    answer: () =>
      accepted
        ? { text: JSON.stringify(accepted.value), value: accepted.value }
        : { text: "", failure: failure ?? "no structured_output value was produced" },
    onAnswer() {
      if (accepted || failure) return undefined;
      const repair = spend("the answer was written as text instead of a structured_output call");
      return repair ? `Call the ${STRUCTURED_OUTPUT_TOOL} tool now with your answer as its input; do not answer in text.` : undefined;
    },
  };
}
