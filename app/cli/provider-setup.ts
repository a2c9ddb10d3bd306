import type { Provider } from "../../protocol/provider.js";
import type { SdkFetch } from "../providers/http.js";
import { BUILTIN_PROVIDERS, modelInfo, parseModelRef, resolveHeaders, type ProviderPreset } from "../providers/registry.js";
import type { ResolvedConfig } from "./config.js";
import { UsageError } from "./errors.js";

/** A chosen model with everything needed to build its provider. */
export interface ModelChoice {
  providerId: string;
  model: string;
  preset: ProviderPreset;
  apiKey: string;
  baseURL?: string;
  /** Where the base URL came from, for messages: a variable name or a config key. */
  baseURLSource?: string;
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
      "no_provider",
    );
  }
  const { provider, model } = parseModelRef(wanted);
  const preset = config.providers[provider];
  if (!preset) {
    throw new UsageError(`unknown provider "${provider}" in model "${wanted}"; known: ${Object.keys(config.providers).join(", ")}`, "unknown_model");
  }
  return finish(provider, model ?? preset.defaultModel, preset, env);
}

function finish(providerId: string, model: string, preset: ProviderPreset, env: NodeJS.ProcessEnv): ModelChoice {
  const key = preset.apiKeyEnv ? env[preset.apiKeyEnv] : undefined;
  if (!key && !preset.keyOptional) {
    throw new UsageError(`provider "${providerId}" needs an API key: set ${preset.apiKeyEnv ?? "apiKeyEnv in its config"}`, "no_provider");
  }
  const fromEnv = preset.baseURLEnv && env[preset.baseURLEnv] ? preset.baseURLEnv : undefined;
  const baseURL = fromEnv ? env[fromEnv] : preset.baseURL;
  const hint = preset.baseURLEnv ? `; set ${preset.baseURLEnv} or providers.${providerId}.baseURL to change it` : `; set providers.${providerId}.baseURL to change it`;
  const baseURLSource = fromEnv
    ?? (baseURL === undefined || baseURL === BUILTIN_PROVIDERS[providerId]?.baseURL
      ? `the default for ${providerId}${hint}`
      : `providers.${providerId}.baseURL in your config`);
  if (baseURL !== undefined && !isHttpURL(baseURL)) {
    throw new UsageError(`${baseURLSource} is not an http(s) URL: ${JSON.stringify(baseURL)} (expected e.g. http://127.0.0.1:8080${preset.kind === "openai" ? "/v1" : ""})`);
  }
  return { providerId, model, preset, apiKey: key ?? "not-needed", baseURL, baseURLSource };
}

/** A base URL the SDKs can use: it parses, is http or https and names a host. */
function isHttpURL(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/** Builds the provider, loading only the SDK it needs. */
export async function createProvider(choice: ModelChoice, sessionId: string, requestTimeoutMs?: number, fetch?: SdkFetch): Promise<Provider> {
  const info = modelInfo(choice.preset, choice.model);
  const options = {
    kind: choice.preset.kind,
    providerId: choice.providerId,
    model: choice.model,
    baseURL: choice.baseURL,
    baseURLSource: choice.baseURLSource,
    apiKey: choice.apiKey,
    authStyle: choice.preset.authStyle,
    headers: resolveHeaders(choice.preset.headers, sessionId),
    maxOutputTokens: info.maxOutputTokens,
    thinkingBudget: info.thinkingBudget,
    refuses: info.refuses,
    images: info.images,
    requestTimeoutMs,
    fetch,
  };
  if (choice.preset.kind === "anthropic") {
    const { createAnthropicProvider } = await import("../providers/anthropic.js");
    return createAnthropicProvider(options);
  }
  const { createOpenAIProvider } = await import("../providers/openai.js");
  return createOpenAIProvider(options);
}
