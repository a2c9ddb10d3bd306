import type { EventDraft } from "../../protocol/events.js";
import type { Usage } from "../../protocol/messages.js";
import { addUsage } from "../../protocol/usage.js";
import type { PermissionRequester } from "../permissions/requester.js";
import type { SubagentHost, Tool } from "../tools/tool.js";
import { createMaxStepsPolicy } from "./max-steps.js";
import { runTurn, type TurnOptions } from "./turn.js";

/*
 * Subagents: a `task` call runs the turn loop again (runTurn, the one loop) with a fresh
 * context — its own system prompt, the task as its only message, its own step limit and
 * the tools the call chose — on the parent turn's provider, bus, gate and abort signal.
 */

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
 * the parent's signal aborts. `spent.usage` gathers what they used, for the parent turn's.
 */
export function subagentHosts(parent: TurnOptions, spent: { usage: Usage }): (callId: string, tools: Tool[]) => SubagentHost {
  return (callId, tools) => ({
    tools,
    async run(request) {
      const outcome = await runTurn({
        sessionId: parent.sessionId, turnId: `${parent.turnId}/${callId}`, provider: parent.provider,
        tools: request.tools, system: request.system, history: [],
        user: { role: "user", content: [{ type: "text", text: request.prompt }], headless: parent.user.headless },
        emit: childEmit(parent.emit, callId), requester: childRequester(parent.requester, callId),
        retry: parent.retry, signal: parent.signal, sleep: parent.sleep,
        policies: [createMaxStepsPolicy(request.maxSteps, true, false)],
      });
      spent.usage = addUsage(spent.usage, outcome.usage);
      return outcome;
    },
  });
}
