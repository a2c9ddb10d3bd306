import type { PermissionMode } from "../../protocol/commands.js";
import type { KeenEvent } from "../../protocol/events.js";
import type { Provider } from "../../protocol/provider.js";
import { addUsage } from "../../protocol/usage.js";
import { mixedCost, noSpend, subagentHosts, type ChildModels } from "./subagent.js";
import { runTurn, type TurnOptions, type TurnOutcome } from "./turn.js";

/**
 * What the engine hands a turn backend: the embedded loop's options plus where the session runs and
 * what it stored. A backend that runs whole turns itself (the CLI runner) gets no provider.
 */
export interface BackendTurnOptions extends Omit<TurnOptions, "provider"> {
  cwd: string;
  /** The session's stored events since its last compaction (a backend reads its own state from them). */
  events: KeenEvent[];
  /** The engine's permission mode for this turn. */
  permissionMode: PermissionMode;
}

/**
 * Runs one whole turn, tools included. Contract (as runTurn's): never throws;
 * emits `user-message` first and `turn-end` last; ends `interrupted` when the
 * signal aborts.
 */
export interface TurnBackend {
  readonly name: "embedded" | "cli";
  run(options: BackendTurnOptions): Promise<TurnOutcome>;
}

/**
 * Keen's own loop, talking to `provider` with Keen's tools. Its subagents' usage counts as the
 * turn's; a subagent on another model (`models`: the turn's model and how to reach others) is
 * priced at that model's price in the turn's cost.
 */
export function embeddedBackend(provider: Provider, models: ChildModels = {}): TurnBackend {
  return {
    name: "embedded",
    async run(options) {
      const spent = noSpend();
      const turn = { ...options, provider };
      const outcome = await runTurn({ ...turn, subagents: subagentHosts(turn, spent, models) });
      return { ...outcome, usage: addUsage(outcome.usage, spent.usage), ...mixedCost(outcome.usage, spent, models.price) };
    },
  };
}
