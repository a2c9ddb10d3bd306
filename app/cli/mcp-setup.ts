import { join, resolve } from "node:path";
import type { EventDraft } from "../../protocol/events.js";
import { secretValues, type McpServerConfig, type McpServerSpec } from "../mcp/config.js";
import type { Confine, McpHandle, McpNotice } from "../mcp/manager.js";
import { collectMcpServers, isInlineJson, McpConfigError, type McpSources } from "../mcp/sources.js";
import { isSecretEnvName, toolEnv } from "../tools/index.js";
import { terminalText } from "../headless/terminal-text.js";
import { secretsRedactor } from "./secrets.js";
import type { KeenPaths, ResolvedConfig } from "./config.js";
import { UsageError } from "./errors.js";
import { version } from "./version.js";

/** The configured servers of a workspace, for a session or for `keen mcp list`. Throws UsageError for a bad `--mcp-config`. */
export function mcpSources(
  paths: KeenPaths, config: ResolvedConfig, workspace: string, flagFiles: string[] = [], env = process.env, client?: Record<string, McpServerConfig>,
): McpSources {
  try {
    return collectMcpServers({
      user: config.mcpServers, userFile: paths.configFile, flagFiles: flagFiles.map((f) => (isInlineJson(f) ? f : resolve(f))), client, workspace, trust: config.mcpTrust, env,
      providerKeyNames: Object.values(config.providers).flatMap((p) => (p.apiKeyEnv ? [p.apiKeyEnv] : [])), isSecretName: isSecretEnvName,
    });
  } catch (error) {
    if (error instanceof McpConfigError) throw new UsageError(error.message);
    throw error;
  }
}

/** Every header and env value of the configured servers: the session's redactor hides them everywhere. */
export function mcpSecrets(servers: McpServerSpec[]): string[] {
  // A server whose expansion failed never starts, and its values are still the `${…}` text.
  return servers.flatMap((s) => (s.error ? [] : secretValues(s.config)));
}

/**
 * Starts a session's servers (none: nothing of the SDK loads) and returns the
 * handle with an `attach` that turns its notices into `mcp-server` events.
 * Stdio servers start from Keen's environment without secret-looking
 * variables and provider keys; what a server needs it names in its `env`.
 * Their stderr logs get the session's redactor and visible control characters.
 */
export async function openMcp(paths: KeenPaths, config: ResolvedConfig, sources: McpSources, cwd: string, env = process.env, confine?: Confine | string) {
  // The manager (and through it the SDK's side bundle) loads only when there is a server: start-up never pays for it.
  const handle: McpHandle | undefined = sources.servers.length || sources.untrusted.length || sources.warnings.length
    ? await (await import("../mcp/manager.js")).startMcp(sources.servers, {
      cwd, env: toolEnv(env), logDir: join(paths.dataDir, "mcp-logs"), settings: config.mcp, clientVersion: version, untrusted: sources.untrusted, confine,
      log: { redactor: secretsRedactor(env, config.providers, mcpSecrets(sources.servers)), visible: terminalText },
    })
    : undefined;
  let warned = false;
  return {
    handle,
    /** Forwards server notices (and config warnings) as events. */
    attach(emit: (event: EventDraft) => Promise<void>, warnings: string[]): void {
      if (!warned) {
        warned = true;
        const notices: McpNotice[] = [...sources.warnings, ...warnings].map((message) => ({ server: "", status: "warning", tools: [], message }));
        for (const notice of notices) void emit({ kind: "mcp-server", ...notice });
      }
      handle?.attach((notice) => void emit({ kind: "mcp-server", ...notice }));
    },
  };
}
