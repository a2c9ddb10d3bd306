import type { EventDraft } from "../../protocol/events.js";
import type { Message, Usage } from "../../protocol/messages.js";
import { addUsage, emptyUsage } from "../../protocol/usage.js";
import type { Provider } from "../../protocol/provider.js";
import type { PermissionRequester } from "../permissions/requester.js";
import { callView, type SubagentHost, type Tool } from "../tools/tool.js";
import type { RetryPolicy } from "./retry.js";
import { runStep } from "./step.js";
import { followUp, planStep, replaceConversation, stopsAfterTools, type PendingRequest, type TurnPolicy } from "./policy.js";
import { runToolCalls } from "./tool-runner.js";
import { typedText } from "./user-shell.js";
import { afterIO } from "../after-io.js";

export type { StepPlan } from "./policy.js";

/** Everything one turn needs; the test seam (no module mocking). */
export interface TurnOptions {
  sessionId: string;
  turnId: string;
  provider: Provider;
  tools: Tool[];
  /** The tools as of now, read before every request (MCP servers change their lists); `tools` when absent. */
  currentTools?: () => Tool[];
  system: string;
  history: Message[];
  user: Message;
  emit: (event: EventDraft) => Promise<void>;
  requester: PermissionRequester;
  retry: RetryPolicy;
  signal: AbortSignal;
  /** Per-turn policies (max-steps, structured output, ...), consulted in order. */
  policies?: TurnPolicy[];
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** How long an answer may keep us waiting, or pause its stream, before tools warm up (tests); default WARM_AFTER_MS. */
  warmAfterMs?: number;
  /** Child loops for delegating calls (`task`), one per call with the step's tools (app/agent/subagent.ts); absent: none. */
  subagents?: (callId: string, tools: Tool[]) => SubagentHost;
}

/** How a turn ended. */
export interface TurnOutcome {
  status: "success" | "error" | "interrupted" | "max_turns";
  /** Visible text of the final model response. */
  text: string;
  steps: number;
  usage: Usage;
  errors: string[];
  /** Raw assistant messages of the turn, in order. */
  assistant: Message[];
  /** The provider's stop reason of the last completed step. */
  stopReason?: string;
  /** Usage of the last completed request: what the context held then. */
  lastUsage?: Usage;
  /**
   * What the turn cost, when its backend knows better than one model's price (the CLI reports its own; a
   * subagent ran on another model); null: part of it ran on a model without a price, so no estimate.
   */
  costUsd?: number | null;
  /** The context window the backend reported for its model (the CLI's `modelUsage`). */
  contextWindow?: number;
}

/**
 * Runs one turn: steps until the model answers without tool calls. Contract:
 * never throws; emits `user-message` first and `turn-end` last; every
 * completed assistant message is emitted (storage keeps it) before its tools run.
 */
export async function runTurn(options: TurnOptions): Promise<TurnOutcome> {
  const outcome: TurnOutcome = { status: "success", text: "", steps: 0, usage: emptyUsage(), errors: [], assistant: [] };
  // Storage first, with the first request built underneath: the user-message (stored before it is printed) and its
  // echo come before every other event of the turn, since each later emit waits for them; meanwhile the first
  // request is built and handed to fetch, and its bytes leave once they are stored (ProviderRequest.notBefore), so
  // a request never leaves unrecorded (docs/sessions.md) while the write's disk I/O overlaps the request's CPU.
  const opened = options.emit({ kind: "user-message", turn_id: options.turnId, message: options.user })
    .then(() => options.emit({ kind: "text", role: "user", content: typedText(options.user) }));
  // A user-message that could not be emitted lets no request go: the one built meanwhile is aborted before its
  // hold lets go (handlers run in order; the hold's is added later). The failure itself surfaces through `emit`.
  const unopened = new AbortController();
  opened.catch((error) => unopened.abort(error));
  const emit = async (event: EventDraft) => {
    await opened;
    await options.emit(event);
  };
  let history = options.history;
  let turnMessages: Message[] = [options.user];
  const policies = options.policies ?? [];
  let last: PendingRequest["last"];
  let attempt = 1;
  for (let step = 1; ; step++) {
    const tools = options.currentTools?.() ?? options.tools;
    const definitions = tools.map((t) => t.definition);
    const plan = planStep(policies, step);
    if (!plan) {
      outcome.status = "max_turns";
      break;
    }
    const pending: PendingRequest = {
      turnId: options.turnId, step, system: options.system, tools: definitions, messages: [...history, ...turnMessages],
      last, emit, signal: options.signal, retry: options.retry,
    };
    // A policy (compaction) may replace the conversation before a request, and once after it overflowed.
    const replace = async (overflow?: string): Promise<boolean> => {
      const replaced = await replaceConversation(policies, { ...pending, ...(overflow ? { overflow } : {}) });
      if (!replaced) return false;
      history = replaced;
      turnMessages = [];
      last = undefined;
      pending.messages = replaced;
      return true;
    };
    await replace();
    const send = async (notBefore?: Promise<unknown>) => {
      const messages = [...pending.messages];
      if (plan.inject) {
        await emit({ kind: "prompt-injection", turn_id: options.turnId, step, name: plan.inject.name, text: plan.inject.text });
        messages[messages.length - 1] = withText(messages[messages.length - 1]!, plan.inject.text);
      }
      const warm = step === 1 ? warmWhileWaiting(tools, options.warmAfterMs ?? WARM_AFTER_MS) : undefined;
      return runStep({
        provider: options.provider,
        request: { system: options.system, messages, tools: definitions, toolChoice: plan.toolChoice, sessionId: options.sessionId, ...(notBefore ? { notBefore } : {}) },
        retry: options.retry, signal: notBefore ? AbortSignal.any([options.signal, unopened.signal]) : options.signal, sleep: options.sleep, firstAttempt: attempt,
        emit: warm ? async (event) => { await emit(event); warm(event); } : emit,
        describe: (name, input) => {
          const tool = tools.find((t) => t.definition.name === name);
          return tool ? callView(tool, input) : undefined;
        },
      });
    };
    // The recorder starts its write on the next turn of the event loop (events emitted together are written
    // together); building the request is synchronous work that would run first and leave the disk idle meanwhile.
    if (step === 1) await afterIO();
    let result = await send(step === 1 ? opened : undefined);
    if (!result.ok && result.overflow && !result.partialRaw && (await replace(result.error))) {
      // The overflowed attempt failed before any output; the retry gets the next attempt number.
      attempt++;
      result = await send();
    }
    if (!result.ok) {
      outcome.status = result.aborted ? "interrupted" : "error";
      // A step the model answered, even in part, was made and billed: count it and what the provider reported for it.
      if (result.usage || result.partialRaw) outcome.steps = step;
      if (result.usage) outcome.usage = addUsage(outcome.usage, result.usage);
      if (!result.aborted) {
        outcome.errors.push(result.error);
        await emit({ kind: "error", message: result.error, error_code: "provider" });
      }
      // An interrupted answer is the text it had streamed (an earlier step's answer when this one had said nothing yet).
      if (result.partialText) outcome.text = result.partialText;
      if (result.partialRaw) {
        // What the cut attempt produced is kept, so a resumed session sees it.
        const partial: Message = { role: "assistant", content: [{ type: "text", text: result.partialRaw }] };
        outcome.assistant.push(partial);
        await emit({ kind: "assistant-message", turn_id: options.turnId, message: partial });
      }
      break;
    }
    outcome.steps = step;
    attempt = result.lastAttempt;
    outcome.usage = addUsage(outcome.usage, result.usage);
    outcome.text = result.visibleText;
    outcome.stopReason = result.stopReason;
    outcome.lastUsage = result.usage;
    last = { usage: result.usage, sent: pending.messages.length };
    outcome.assistant.push(result.message);
    turnMessages.push(result.message);
    await emit({ kind: "assistant-message", turn_id: options.turnId, message: result.message, stop_reason: result.stopReason });
    if (result.toolCalls.length === 0) {
      const prompt = plan.final ? undefined : await followUp(policies, result.visibleText);
      if (!prompt) {
        if (plan.final) outcome.status = "max_turns";
        break;
      }
      // In-process only: the follow-up is a repair prompt, not a user message to keep.
      turnMessages.push({ role: "user", content: [{ type: "text", text: prompt }], headless: options.user.headless });
      continue;
    }
    const blocks = await runToolCalls(result.toolCalls, {
      tools, requester: options.requester, emit, signal: options.signal, refuse: plan.refuse, subagents: options.subagents,
    });
    const results: Message = { role: "user", content: blocks };
    turnMessages.push(results);
    if (options.signal.aborted) {
      outcome.status = "interrupted";
      break;
    }
    if (plan.final) {
      outcome.status = "max_turns";
      break;
    }
    if (stopsAfterTools(policies)) break;
  }
  await emit({
    kind: "turn-end", turn_id: options.turnId, status: outcome.status, steps: outcome.steps,
    ...(outcome.stopReason ? { stop_reason: outcome.stopReason } : {}),
  });
  return outcome;
}

function withText(message: Message, text: string): Message {
  return { ...message, content: [...message.content, { type: "text", text }] };
}

/**
 * Once a turn's first request is on its way, tools set up what their first call needs (the sandbox)
 * meanwhile (Tool.warm). Loading the sandbox library is ~90 ms of synchronous work: never ahead of the
 * request (it held the first delta back by ~100 ms on loopback), and never in the middle of a streaming
 * answer (it held every delta behind it back as long: the pass-through bench's p99 went from 3 to 65 ms).
 * So it starts while nothing streams: once the answer has kept us waiting WARM_AFTER_MS (a real
 * provider's time to first token is hundreds of ms), once its events pause as long, or when the step's
 * tool calls are out (a call is coming), whichever comes first. A text answer streamed without a pause
 * warms nothing while it streams, and a `keen run` that ends with it pays nothing (the timer is unref'd);
 * a session that stays warms once the answer has been still that long. Returns the call the step's events make.
 */
const WARM_AFTER_MS = 150;
function warmWhileWaiting(tools: readonly Tool[], after: number): (event: EventDraft) => void {
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    clearTimeout(timer);
    setImmediate(() => tools.forEach((t) => t.warm?.()));
  };
  // Unref: a run that ends sooner must not wait for it.
  let timer = setTimeout(start, after).unref();
  return (event) => {
    if (started) return;
    if (event.kind === "tool-use") return start();
    clearTimeout(timer);
    timer = setTimeout(start, after).unref();
  };
}
