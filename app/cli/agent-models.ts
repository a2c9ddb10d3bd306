import type { Provider } from "../../protocol/provider.js";
import type { ChildModel } from "../agent/subagent.js";
import type { SdkFetch } from "../providers/http.js";
import { modelInfo, parseModelRef, type ProviderPreset } from "../providers/registry.js";
import type { ResolvedConfig } from "./config.js";
import { chooseModel, createProvider, type ModelChoice } from "./provider-setup.js";

/*
 * The model a custom agent names (its frontmatter `model`), for its subagent. Claude Code's files
 * say `sonnet`, `opus` or `haiku`, or a model id; Keen's `--model` says `<provider>/<model>`.
 * Resolved, in order:
 *   1. a model id some configured provider lists (its `models` or `defaultModel`): that provider,
 *      the session's first, then the config's order;
 *   2. `sonnet` / `opus` / `haiku`: the first model of that tier (`claude-<alias>…`) a provider lists,
 *      in the same order (the built-in catalogue lists the newest first);
 *   3. `<provider>/<model>` for a known provider, as `--model` takes it (any model id).
 * A provider found in step 1 or 2 must have its key (or need none) unless none that lists the model
 * has: then its missing key is the error. Anything else is an unknown model. The error messages are
 * the user's to read in the `task` result (app/tools/task.ts adds the agent's file).
 */

const ALIASES = new Set(["sonnet", "opus", "haiku"]);

/** What the resolver needs of the session: its model and provider, config, keys, and its cassette's fetch. */
export interface AgentModelContext {
  session: ModelChoice;
  provider: Provider;
  sessionId: string;
  config: ResolvedConfig;
  env: NodeJS.ProcessEnv;
  /** The fetch for another provider of this session (recording or replaying a cassette); undefined: the network's. */
  fetchFor?: (choice: ModelChoice) => SdkFetch | undefined;
  /** A replayed cassette's choice of model (no key needed); absent: chooseModel's. */
  choose?: (ref: string, config: ResolvedConfig) => ModelChoice;
}

/**
 * The session's resolver for agents' models: each model's provider is built once and kept for the
 * session's setup; the session's own model gets the session's provider. Contract: rejects with a
 * one-line reason for a model that cannot be used.
 */
export function agentModels(ctx: AgentModelContext): (name: string) => Promise<ChildModel> {
  const built = new Map<string, Promise<ChildModel>>();
  const sessionRef = `${ctx.session.providerId}/${ctx.session.model}`;
  return async (name) => {
    const choice = chooseAgentModel(name, ctx);
    const ref = `${choice.providerId}/${choice.model}`;
    const price = modelInfo(choice.preset, choice.model).price;
    if (ref === sessionRef) return { ref, provider: ctx.provider, price };
    let model = built.get(ref);
    if (!model) {
      model = createProvider(choice, ctx.sessionId, undefined, ctx.fetchFor?.(choice)).then((provider) => ({ ref, provider, price }));
      built.set(ref, model);
      model.catch(() => built.delete(ref));
    }
    return model;
  };
}

/** The provider and model an agent's `model` names; throws an Error saying why when there is none to use. */
export function chooseAgentModel(name: string, ctx: Pick<AgentModelContext, "session" | "config" | "env" | "choose">): ModelChoice {
  const { config, env } = ctx;
  const choose = (ref: string) => (ctx.choose ? ctx.choose(ref, config) : chooseModel(ref, config, env));
  // Replaying needs no key: every provider counts as set up.
  const usable = (preset: ProviderPreset) => Boolean(ctx.choose) || preset.keyOptional || Boolean(preset.apiKeyEnv && env[preset.apiKeyEnv]);
  const order = [ctx.session.providerId, ...Object.keys(config.providers).filter((id) => id !== ctx.session.providerId)];
  const lists = (preset: ProviderPreset) => [...Object.keys(preset.models), preset.defaultModel];
  const find = (matches: (model: string) => boolean): { providerId: string; model: string } | undefined => {
    let unusable: { providerId: string; model: string } | undefined;
    for (const providerId of order) {
      const preset = config.providers[providerId];
      const model = preset && lists(preset).find(matches);
      if (!model) continue;
      if (usable(preset)) return { providerId, model };
      unusable ??= { providerId, model };
    }
    return unusable;
  };
  const alias = name.toLowerCase();
  const found = find((model) => model === name) ?? (ALIASES.has(alias) ? find((model) => model.includes(`claude-${alias}`)) : undefined);
  if (found) return choose(`${found.providerId}/${found.model}`);
  const { provider, model } = parseModelRef(name);
  if (model && config.providers[provider]) return choose(name);
  const hint = ALIASES.has(alias)
    ? `no configured provider lists a Claude ${alias} model`
    : `no configured provider lists it; name it as <provider>/<model> (e.g. ${ctx.session.providerId}/${name}) or add it under providers.<id>.models in Keen's config`;
  throw new Error(`unknown model "${name}": ${hint}`);
}
