import type { EventDraft } from "../../protocol/events.js";
import type { Usage } from "../../protocol/messages.js";
import type { Provider } from "../../protocol/provider.js";
import { addUsage, costUsd, emptyUsage, type ModelPrice } from "../../protocol/usage.js";
import type { PermissionRequester } from "../permissions/requester.js";
import type { SubagentHost, SubagentOutcome, Tool } from "../tools/tool.js";
import { createMaxStepsPolicy } from "./max-steps.js";
import { runTurn, type TurnOptions } from "./turn.js";

/*
 * Subagents: a `task` call runs the turn loop again (runTurn, the one loop) with a fresh
 * context — its own system prompt, the task as its only message, its own step limit and
 * the tools the call chose — on the parent turn's bus, gate and abort signal, and on its provider
 * unless a custom agent names another model (then that model's provider, built by the session's
 * setup: app/cli/agent-models.ts).
 */

/** A model a custom agent names, ready for a child: its provider and its list price. */
export interface ChildModel {
  /** `<provider>/<model>` */
  ref: string;
  provider: Provider;
  price?: ModelPrice;
}

/** What a turn's children know of models: the turn's own and how to reach another. */
export interface ChildModels {
  /** The parent turn's model, `<provider>/<model>` (named in a `task` result's details). */
  ref?: string;
  /** Its list price, for the turn's cost when a child ran on another model. */
  price?: ModelPrice;
  /** Resolves a model an agent names. Contract: rejects with a one-line reason when it cannot be used. */
  resolve?(name: string): Promise<ChildModel>;
}

/** What one turn's children used: all their tokens, and apart, those of each child that ran on another model than the turn's. */
export interface ChildSpend {
  usage: Usage;
  elsewhere: { usage: Usage; price?: ModelPrice }[];
}

/** An empty ChildSpend, for a turn about to run. */
export function noSpend(): ChildSpend {
  return { usage: emptyUsage(), elsewhere: [] };
}

/**
 * The turn's cost when a child ran on another model: each model's tokens at its own price
 * (`null`: one of them has no price, so there is no estimate). Empty when every request went
 * to the turn's model: the result prices the whole at that model's price, as for any turn.
 */
export function mixedCost(own: Usage, spent: ChildSpend, price: ModelPrice | undefined): { costUsd?: number | null } {
  if (!spent.elsewhere.length) return {};
  const others = spent.elsewhere.reduce((sum, part) => addUsage(sum, part.usage), emptyUsage());
  const parts = [{ usage: subtractUsage(addUsage(own, spent.usage), others), price }, ...spent.elsewhere];
  if (parts.some((p) => !p.price)) return { costUsd: null };
  const dollars = parts.reduce((sum, p) => sum + costUsd(p.usage, p.price!), 0);
  return { costUsd: Math.round(dollars * 1e6) / 1e6 };
}

function subtractUsage(a: Usage, b: Usage): Usage {
  const out = { ...a };
  for (const key of Object.keys(b) as (keyof Usage)[]) out[key] = a[key] - b[key];
  return out;
}

/**
 * A child's kinds that stay off the bus: its streaming pieces and retries (their attempt
 * numbers are the child's, and every reader that assembles the answer from deltas would
 * mix them into the parent's), and its plan (a child's checklist is not the session's plan).
 * Its complete text and thinking entries carry what the deltas did.
 */
const KEPT_TO_ITSELF = new Set<EventDraft["kind"]>(["text-delta", "thinking-start", "thinking-delta", "thinking-end", "content-end", "retry", "plan-update"]);

/** The parent's emit for a child: every event it keeps tagged with the `task` call's id. */
export function childEmit(emit: (event: EventDraft) => Promise<void>, parentCallId: string): (event: EventDraft) => Promise<void> {
  return async (event) => {
    if (KEPT_TO_ITSELF.has(event.kind)) return;
    await emit({ ...event, parent_tool_call_id: parentCallId } as EventDraft);
  };
}

/** The parent's gate for a child: same mode, rules and prompts; its requests name the `task` call they come from. */
export function childRequester(parent: PermissionRequester, parentCallId: string): PermissionRequester {
  return {
    request: (req, signal) => parent.request({ ...req, parentCallId }, signal),
    ...(parent.wantsPreview ? { wantsPreview: (req) => parent.wantsPreview!(req) } : {}),
  };
}

/**
 * The hosts a turn offers its delegating calls (the tool runner makes one per call, with the
 * step's tools). Children run headless (the final step demands the answer: nobody but the
 * parent reads it), without compaction (a fresh context bounded by its steps), and end when
 * the parent's signal aborts. `spent` gathers what they used, for the parent turn's usage and cost.
 * A child whose agent names a model runs on it (`models.resolve`); one that cannot be used is
 * refused before the child starts, with the reason.
 */
export function subagentHosts(parent: TurnOptions, spent: ChildSpend, models: ChildModels = {}): (callId: string, tools: Tool[]) => SubagentHost {
  return (callId, tools) => ({
    tools,
    async run(request) {
      let chosen: ChildModel | undefined;
      if (request.model) {
        if (!models.resolve) return refused(request.model, "this session cannot run a subagent on another model");
        try {
          chosen = await models.resolve(request.model);
        } catch (error) {
          return refused(request.model, error instanceof Error ? error.message : String(error));
        }
      }
      const elsewhere = chosen && chosen.ref !== models.ref ? chosen : undefined;
      const outcome = await runTurn({
        sessionId: parent.sessionId, turnId: `${parent.turnId}/${callId}`, provider: elsewhere?.provider ?? parent.provider,
        tools: request.tools, system: request.system, history: [],
        user: { role: "user", content: [{ type: "text", text: request.prompt }], headless: parent.user.headless },
        emit: childEmit(parent.emit, callId), requester: childRequester(parent.requester, callId),
        retry: parent.retry, signal: parent.signal, sleep: parent.sleep,
        policies: [createMaxStepsPolicy(request.maxSteps, true, false)],
      });
      spent.usage = addUsage(spent.usage, outcome.usage);
      if (elsewhere) spent.elsewhere.push({ usage: outcome.usage, price: elsewhere.price });
      const model = chosen?.ref ?? models.ref;
      return { ...outcome, ...(model ? { model } : {}) };
    },
  });
}

function refused(model: string, reason: string): SubagentOutcome {
  return { status: "error", text: "", steps: 0, errors: [], model, refused: reason };
}
