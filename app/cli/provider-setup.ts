import type { Provider } from "../../protocol/provider.js";
import { modelInfo, parseModelRef, resolveHeaders, type ProviderPreset } from "../providers/registry.js";
import type { ResolvedConfig } from "./config.js";
import { UsageError } from "./errors.js";

/** A chosen model with everything needed to build its provider. */
export interface ModelChoice {
  providerId: string;
  model: string;
  preset: ProviderPreset;
  apiKey: string;
  baseURL?: string;
}

/**
 * Picks the model: `--model`, else the session's, else config, else the first
 * provider whose key is set. Throws UsageError naming what to set when none works.
 */
export function chooseModel(ref: string | undefined, config: ResolvedConfig, env: NodeJS.ProcessEnv): ModelChoice {
  const wanted = ref ?? config.model;
  if (!wanted) {
    for (const id of ["anthropic", "openai"]) {
      const preset = config.providers[id]!;
      if (preset.apiKeyEnv && env[preset.apiKeyEnv]) return finish(id, preset.defaultModel, preset, env);
    }
    throw new UsageError(
      "no provider configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY (with ANTHROPIC_BASE_URL / OPENAI_BASE_URL for compatible servers), or pass --model <provider>/<model>",
    );
  }
  const { provider, model } = parseModelRef(wanted);
  const preset = config.providers[provider];
  if (!preset) {
    throw new UsageError(`unknown provider "${provider}" in model "${wanted}"; known: ${Object.keys(config.providers).join(", ")}`);
  }
  return finish(provider, model ?? preset.defaultModel, preset, env);
}

function finish(providerId: string, model: string, preset: ProviderPreset, env: NodeJS.ProcessEnv): ModelChoice {
  const key = preset.apiKeyEnv ? env[preset.apiKeyEnv] : undefined;
  if (!key && !preset.keyOptional) {
    throw new UsageError(`provider "${providerId}" needs an API key: set ${preset.apiKeyEnv ?? "apiKeyEnv in its config"}`);
  }
  const baseURL = (preset.baseURLEnv && env[preset.baseURLEnv]) || preset.baseURL;
  return { providerId, model, preset, apiKey: key ?? "not-needed", baseURL };
}

/** Builds the provider, loading only the SDK it needs. */
export async function createProvider(choice: ModelChoice, sessionId: string, requestTimeoutMs?: number): Promise<Provider> {
  const info = modelInfo(choice.preset, choice.model);
  const options = {
    kind: choice.preset.kind,
    providerId: choice.providerId,
    model: choice.model,
    baseURL: choice.baseURL,
    apiKey: choice.apiKey,
    authStyle: choice.preset.authStyle,
    headers: resolveHeaders(choice.preset.headers, sessionId),
    maxOutputTokens: info.maxOutputTokens,
    thinkingBudget: info.thinkingBudget,
    refuses: info.refuses,
    requestTimeoutMs,
  };
  if (choice.preset.kind === "anthropic") {
    const { createAnthropicProvider } = await import("../providers/anthropic.js");
    return createAnthropicProvider(options);
  }
  const { createOpenAIProvider } = await import("../providers/openai.js");
  return createOpenAIProvider(options);
}
