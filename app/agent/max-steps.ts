import type { StepPlan, TurnPolicy } from "./policy.js";
import type { ToolCall } from "./tool-runner.js";

/** A prompt added to one request only. */
export interface InjectedPrompt {
  name: "max-steps-prewarn" | "max-steps-final" | "max-steps-interactive";
  text: string;
}

/** Where the loop stands: step is 1-based; maxSteps may be Infinity. */
export interface MaxStepsState {
  step: number;
  maxSteps: number;
  /** Nobody can answer follow-ups (every `keen run`). */
  headless: boolean;
  /** `--output-schema`: the answer is a `structured_output` call. */
  structured?: boolean;
}

const PREWARN = `Step budget: {STEPS_REMAINING} steps remain in this run, including this one. You may use tools in this step only once more; on the next step tools are disabled and you must give your final answer. Use this step to gather whatever you still need most.`;

const HEADLESS_FINAL = `FINAL STEP — tools are now disabled. Nobody can answer follow-up questions in this run, so write the answer itself now:
- give the answer the user asked for, in the format they asked for;
- when you are not certain, give your best guess — an uncertain answer is far more useful than none;
- no summary of what you tried, no description of the step limit, no meta-commentary, no questions.
If you used tools in this turn, end with your <keen_memory> block as usual.`;

const HEADLESS_FINAL_STRUCTURED = `FINAL STEP — only the structured_output tool can run now. Nobody can answer follow-up questions, so call structured_output with your answer now: a value valid against its schema, your best guess when you are not certain. Call no other tool and write no meta-commentary.`;

const INTERACTIVE_FINAL = `You have reached the maximum number of steps for this turn and tools are now disabled. Reply with a short summary of what you found and did so far, what remains, and recommendations for what should be done next.`;

/**
 * Chooses the prompt for a step, or none. Pure. Headless runs get a pre-warning
 * one step before a finite limit (only when the limit is at least 2) and a
 * final prompt that demands the answer itself; interactive sessions get only a
 * gentler summary prompt at the limit.
 */
export function selectMaxStepsPrompt(state: MaxStepsState): InjectedPrompt | undefined {
  const { step, maxSteps, headless } = state;
  if (!Number.isFinite(maxSteps)) return undefined;
  if (step >= maxSteps) {
    if (!headless) return { name: "max-steps-interactive", text: INTERACTIVE_FINAL };
    return { name: "max-steps-final", text: state.structured ? HEADLESS_FINAL_STRUCTURED : HEADLESS_FINAL };
  }
  if (headless && maxSteps >= 2 && step === maxSteps - 1) {
    return { name: "max-steps-prewarn", text: PREWARN.replace("{STEPS_REMAINING}", String(maxSteps - step + 1)) };
  }
  return undefined;
}

const STRUCTURED_TOOL = "structured_output";

/**
 * The step planner for a step budget. On the final step tools stay defined
 * (both APIs reject a request with tool blocks but no tools) with tool_choice
 * none — or auto when the answer must be a structured_output call — and every
 * other call the model emits anyway is reported, not executed. Past the final
 * step the turn ends.
 */
export function createMaxStepsPlanner(maxSteps: number, headless: boolean, structured: boolean): (step: number) => StepPlan | undefined {
  return (step) => {
    if (step > maxSteps) return undefined;
    const prompt = selectMaxStepsPrompt({ step, maxSteps, headless, structured });
    const plan: StepPlan = prompt ? { inject: prompt } : {};
    if (step < maxSteps) return plan;
    return {
      ...plan,
      final: true,
      toolChoice: structured ? "auto" : "none",
      refuse: (call: ToolCall) =>
        structured && call.name === STRUCTURED_TOOL ? undefined : "Not executed: tools are disabled on the final step; answer now.",
    };
  };
}

/** The step budget as a per-turn policy. */
export function createMaxStepsPolicy(maxSteps: number, headless: boolean, structured: boolean): TurnPolicy {
  const planner = createMaxStepsPlanner(maxSteps, headless, structured);
  return { planStep: (step) => planner(step) ?? "stop" };
}
