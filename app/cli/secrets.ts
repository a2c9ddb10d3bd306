import { createRedactor, type Redactor } from "../permissions/redact.js";
import type { ProviderPreset } from "../providers/registry.js";
import { isSecretEnvName } from "../tools/index.js";

/**
 * Every secret value Keen holds: the values of environment variables whose
 * names look secret (isSecretEnvName), the variables any provider reads its
 * key from, and header values from config (a header whose value carries a
 * `{session_id}` placeholder is an id, not a secret), plus `extra` (MCP servers'
 * header and env values). The redactor keeps only
 * values of at least MIN_SECRET_LENGTH characters.
 */
export function knownSecrets(env: NodeJS.ProcessEnv, providers: Record<string, ProviderPreset> = {}, extra: string[] = []): string[] {
  const values: string[] = [...extra];
  for (const [name, value] of Object.entries(env)) if (value && isSecretEnvName(name)) values.push(value);
  for (const preset of Object.values(providers)) {
    const key = preset.apiKeyEnv ? env[preset.apiKeyEnv] : undefined;
    if (key) values.push(key);
    for (const value of Object.values(preset.headers ?? {})) if (!value.includes("{session_id")) values.push(value);
  }
  return values;
}

/** The redactor for this process: known secrets from `env` and, once config is loaded, its providers. */
export function secretsRedactor(env: NodeJS.ProcessEnv = process.env, providers?: Record<string, ProviderPreset>, extra?: string[]): Redactor {
  return createRedactor(knownSecrets(env, providers, extra));
}
