import type { ModelPrice } from "../../protocol/usage.js";

/** Per-model facts the request builder needs. */
export interface ModelInfo {
  contextWindow: number;
  maxOutputTokens: number;
  /** Extended-thinking budget (Anthropic); off when absent. */
  thinkingBudget?: number;
  /** Parameters the model rejects (reasoning models refuse temperature / max_tokens). */
  refuses?: string[];
  /** The model takes images; false: Keen sends a text note in their place. */
  images: boolean;
  /** List price, US dollars per million tokens; unknown prices stay absent (no cost estimate). */
  price?: ModelPrice;
}

/** The wire protocols Keen speaks: every provider (built in or from config) and every cassette speaks one. */
export const PROVIDER_KINDS = ["anthropic", "openai"] as const;
/** One of PROVIDER_KINDS. */
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** A provider preset: how to reach it and which models it knows. */
export interface ProviderPreset {
  kind: ProviderKind;
  baseURL?: string;
  /** Env var the base URL may come from (overridden by config). */
  baseURLEnv?: string;
  /** Env var holding the key. */
  apiKeyEnv?: string;
  /** Servers that need no key (local ones) get a placeholder. */
  keyOptional?: boolean;
  authStyle?: "bearer" | "x-api-key";
  /** Extra headers; `{session_id}` and `{session_id_nohyphens}` are substituted. */
  headers?: Record<string, string>;
  defaultModel: string;
  /** Whether its models take images, unless one says otherwise; absent: true for kind anthropic only. */
  images?: boolean;
  models: Record<string, Partial<ModelInfo>>;
}

// List prices per million tokens (input, output, cache read, cache write), from the vendors' pricing pages
// (checked 2026-11: Anthropic's pricing page, OpenAI's model pages). The Claude 5.5 models carry their tier's
// price, which each tier has kept across versions (Sonnet since 3.x, Opus since 4.5, Haiku since 4.5); config
// sets or overrides any price (`providers.<id>.models.<model>.price`). Long-context surcharges (OpenAI doubles
// input past 272K tokens) are not modelled: cost_usd is an estimate.
const SONNET: ModelPrice = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const OPUS: ModelPrice = { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 };
const HAIKU: ModelPrice = { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 };

const DEFAULT_MODEL_INFO: Omit<ModelInfo, "images"> = { contextWindow: 128_000, maxOutputTokens: 8_192 };
const REASONING: Partial<ModelInfo> = { refuses: ["temperature", "max_tokens"] };

/** Built-in providers; config.json may add more or override any field. */
export const BUILTIN_PROVIDERS: Record<string, ProviderPreset> = {
  anthropic: {
    kind: "anthropic", baseURLEnv: "ANTHROPIC_BASE_URL", apiKeyEnv: "ANTHROPIC_API_KEY", authStyle: "x-api-key",
    defaultModel: "claude-sonnet-5-5",
    models: {
      "claude-sonnet-5-5": { contextWindow: 200_000, maxOutputTokens: 32_000, price: SONNET },
      "claude-opus-5-5": { contextWindow: 200_000, maxOutputTokens: 32_000, price: OPUS },
      "claude-haiku-5-5": { contextWindow: 200_000, maxOutputTokens: 32_000, price: HAIKU },
      "claude-sonnet-4-6": { contextWindow: 200_000, maxOutputTokens: 32_000, price: SONNET },
      "claude-opus-4-6": { contextWindow: 200_000, maxOutputTokens: 32_000, price: OPUS },
      "claude-haiku-4-5": { contextWindow: 200_000, maxOutputTokens: 32_000, price: HAIKU },
    },
  },
  openai: {
    // OpenAI's current models (gpt-4.1 and later, o3, o4-mini) all take images.
    kind: "openai", baseURLEnv: "OPENAI_BASE_URL", apiKeyEnv: "OPENAI_API_KEY", defaultModel: "gpt-5.4", images: true,
    models: {
      "gpt-5.4": { contextWindow: 1_050_000, maxOutputTokens: 128_000, price: { input: 2.5, output: 15, cacheRead: 0.25 }, ...REASONING },
      "gpt-5.4-mini": { contextWindow: 400_000, maxOutputTokens: 128_000, price: { input: 0.75, output: 4.5, cacheRead: 0.075 }, ...REASONING },
      "gpt-4.1": { contextWindow: 1_047_576, maxOutputTokens: 32_768, price: { input: 2, output: 8, cacheRead: 0.5 } },
      "gpt-5": { contextWindow: 400_000, maxOutputTokens: 128_000, price: { input: 1.25, output: 10, cacheRead: 0.125 }, ...REASONING },
      "o3": { contextWindow: 200_000, maxOutputTokens: 100_000, price: { input: 2, output: 8, cacheRead: 0.5 }, ...REASONING },
      "o4-mini": { contextWindow: 200_000, maxOutputTokens: 100_000, price: { input: 1.1, output: 4.4, cacheRead: 0.275 }, ...REASONING },
    },
  },
  "opencode-go": {
    kind: "openai", baseURL: "https://opencode.ai/zen/go/v1", apiKeyEnv: "OPENCODE_API_KEY", defaultModel: "kimi-k2",
    headers: { "x-opencode-session": "{session_id_nohyphens}" }, models: {},
  },
  openrouter: {
    kind: "openai", baseURL: "https://openrouter.ai/api/v1", apiKeyEnv: "OPENROUTER_API_KEY",
    defaultModel: "anthropic/claude-sonnet-4.5", images: true, models: {},
  },
  ollama: {
    kind: "openai", baseURL: "http://127.0.0.1:11434/v1", baseURLEnv: "OLLAMA_BASE_URL", keyOptional: true,
    defaultModel: "qwen3:8b", models: {},
  },
};

/** Model facts with defaults filled in. */
export function modelInfo(preset: ProviderPreset, model: string): ModelInfo {
  // Local and other compatible servers often run text-only models, which fail on an image: they opt in.
  const images = preset.images ?? preset.kind === "anthropic";
  return { ...DEFAULT_MODEL_INFO, images, ...preset.models[model] };
}

/** Splits `<provider>/<model>` on the first slash (model ids may contain more). */
export function parseModelRef(ref: string): { provider: string; model?: string } {
  const at = ref.indexOf("/");
  if (at < 0) return { provider: ref };
  return { provider: ref.slice(0, at), model: ref.slice(at + 1) || undefined };
}

/** Fills `{session_id}` placeholders in header values. */
export function resolveHeaders(headers: Record<string, string> | undefined, sessionId: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    out[name] = value.replaceAll("{session_id_nohyphens}", sessionId.replaceAll("-", "")).replaceAll("{session_id}", sessionId);
  }
  return out;
}
