import type { EventDraft } from "../../protocol/events.js";
import type { Message, Usage } from "../../protocol/messages.js";
import type { ToolDefinition } from "../../protocol/provider.js";
import type { RetryPolicy } from "./retry.js";
import type { ToolCall } from "./tool-runner.js";

/** What a policy may change about one step (max-turns, structured output). */
export interface StepPlan {
  /** Text added to this request only: never stored, never replayed. */
  inject?: { name: string; text: string };
  toolChoice?: "auto" | "none";
  /** Calls the runner must report but not execute. */
  refuse?: (call: ToolCall) => string | undefined;
  /** The last step the budget allows: the turn ends after it, status max_turns. */
  final?: boolean;
}

/**
 * A per-turn policy the loop consults at fixed points (STYLE.md: policies are
 * a list of small modules, not callbacks grown on the loop). The engine builds
 * a fresh list for every turn, so a policy may keep state for one turn.
 */
export interface TurnPolicy {
  /** Before each step: a plan, or "stop" to end the turn before it (limit reached). */
  planStep?(step: number): StepPlan | "stop";
  /** After a step's tools ran: "stop" ends the turn (e.g. structured output accepted). */
  afterTools?(): "continue" | "stop";
  /** The model answered without tool calls: a follow-up prompt keeps the turn going (a Stop hook answers asynchronously). */
  onAnswer?(text: string): string | undefined | Promise<string | undefined>;
  /** After the turn: the answer to report instead of the model's last text. */
  answer?(): PolicyAnswer;
  /**
   * Before each request, and once more after a request failed for not fitting
   * the context window (`overflow`): a conversation to send instead (and to
   * continue the turn from), e.g. a compacted one. Contract: must not throw.
   */
  beforeRequest?(request: PendingRequest): Promise<Message[] | undefined>;
}

/** A request about to be sent, as `beforeRequest` sees it. */
export interface PendingRequest {
  turnId: string;
  step: number;
  system: string;
  tools: ToolDefinition[];
  /** The conversation about to be sent (history and the turn so far). */
  messages: Message[];
  /** The turn's last completed request: its usage and how many of `messages` it sent (its answer follows them). */
  last?: { usage: Usage; sent: number };
  /** The provider's error when the request just failed for not fitting the context window. */
  overflow?: string;
  emit: (event: EventDraft) => Promise<void>;
  signal: AbortSignal;
  retry: RetryPolicy;
}

/** The first replacement conversation a policy offers for a request. */
export async function replaceConversation(policies: TurnPolicy[], request: PendingRequest): Promise<Message[] | undefined> {
  for (const policy of policies) {
    const messages = await policy.beforeRequest?.(request);
    if (messages) return messages;
  }
  return undefined;
}

/**
 * The plans of every policy for one step, merged: injected texts joined,
 * `none` wins over `auto`, the first refusal applies, any `final` is final.
 * Undefined when a policy stops the turn.
 */
export function planStep(policies: TurnPolicy[], step: number): StepPlan | undefined {
  const merged: StepPlan = {};
  const refusers: ((call: ToolCall) => string | undefined)[] = [];
  for (const policy of policies) {
    const plan = policy.planStep?.(step) ?? {};
    if (plan === "stop") return undefined;
    if (plan.inject) {
      merged.inject = merged.inject
        ? { name: `${merged.inject.name}+${plan.inject.name}`, text: `${merged.inject.text}\n\n${plan.inject.text}` }
        : plan.inject;
    }
    if (plan.toolChoice && merged.toolChoice !== "none") merged.toolChoice = plan.toolChoice;
    if (plan.refuse) refusers.push(plan.refuse);
    if (plan.final) merged.final = true;
  }
  if (refusers.length) merged.refuse = (call) => refusers.map((r) => r(call)).find((reason) => reason !== undefined);
  return merged;
}

/** True when some policy ends the turn after a step's tools ran. */
export function stopsAfterTools(policies: TurnPolicy[]): boolean {
  return policies.some((p) => p.afterTools?.() === "stop");
}

/** The first follow-up prompt a policy asks for after a text-only answer. */
export async function followUp(policies: TurnPolicy[], text: string): Promise<string | undefined> {
  for (const policy of policies) {
    const prompt = await policy.onAnswer?.(text);
    if (prompt) return prompt;
  }
  return undefined;
}

/** A policy's say on the turn's answer (structured output replaces the text with its value). */
export interface PolicyAnswer {
  text: string;
  value?: unknown;
  /** Set when the policy could not produce what the turn needed: the turn fails. */
  failure?: string;
}
