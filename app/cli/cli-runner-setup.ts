import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import type { PermissionMode } from "../../protocol/commands.js";
import type { SessionStore } from "../../storage/store.js";
import type { TurnBackend } from "../agent/backend.js";
import type { ChangePreview } from "../permissions/requester.js";
import type { Tool } from "../tools/tool.js";
import { cliTool } from "../agent/cli-tools.js";
import { modelInfo, parseModelRef } from "../providers/registry.js";
import type { ResolvedConfig } from "./config.js";
import { UsageError } from "./errors.js";

/** Which backend runs a session's turns. */
export type Runner = "cli" | "embedded";

/** `--runner`, else the session's own (a stored CLI session stays one), else the config's. */
export function chooseRunner(flag: Runner | undefined, stored: Runner | undefined, config: ResolvedConfig): Runner {
  return flag ?? stored ?? (config.agents?.defaults?.cli?.enabled ? "cli" : "embedded");
}

/** The runner a stored session's turns used: its last turn-end says. */
export async function storedRunner(store: SessionStore, sessionId: string | undefined): Promise<Runner | undefined> {
  if (!sessionId) return undefined;
  // The last turn's runner is all that matters: read from the last compaction on, not the whole history.
  const events = await store.loadRecent(sessionId).then((r) => r.events, () => []);
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.kind === "turn-end") return event.runner === "cli" ? "cli" : "embedded";
  }
  return undefined;
}

/** What the CLI runner needs from the session's setup. */
export interface CliSetup {
  modelRef: string;
  contextWindow: number;
  backend: TurnBackend;
}

/**
 * The CLI runner's part of a session's setup. Throws UsageError (exit 2,
 * before any session exists) when the executable is missing.
 */
export function cliSetup(config: ResolvedConfig, options: {
  model?: string; mode: PermissionMode; maxTurns?: number; allowedTools?: string[]; disallowedTools?: string[]; env: NodeJS.ProcessEnv;
  /** Keen's own write_file / edit_file for this session (their guard), to preview the CLI's Write and Edit asks. */
  previewTools?: Tool[];
}): CliSetup {
  const cli = config.agents?.defaults?.cli ?? {};
  const configured = cli.path ?? "claude";
  // A relative path means the user's directory, not the session's.
  const path = configured.includes("/") ? resolve(configured) : configured;
  if (!findExecutable(path, options.env)) {
    throw new UsageError(`the CLI runner's executable "${path}" was not found${path.includes("/") ? "" : " on PATH"}: install it or set agents.defaults.cli.path in your config`);
  }
  const anthropic = config.providers.anthropic!;
  const wanted = options.model ?? config.model ?? `anthropic/${anthropic.defaultModel}`;
  const parsed = parseModelRef(wanted);
  const modelRef = parsed.model ? wanted : `anthropic/${parsed.provider}`;
  const model = parsed.model ?? parsed.provider;
  const debug = options.env.KEEN_DEBUG ? (line: string) => process.stderr.write(`keen: cli runner: ${line}\n`) : undefined;
  return {
    modelRef,
    contextWindow: modelInfo(anthropic, model).contextWindow,
    backend: lazyCliBackend({
      path, flags: cli.flags ?? [], skipPermissions: cli.skipPermissions === true, timeoutMs: cli.timeoutMs, model: modelRef,
      maxTurns: options.maxTurns, allowedTools: options.allowedTools, disallowedTools: options.disallowedTools, env: options.env, ...(debug ? { debug } : {}),
      notice: (line) => process.stderr.write(`keen: ${line}\n`),
      ...(options.previewTools ? { preview: cliPreview(options.previewTools) } : {}),
    }),
  };
}

/**
 * Previews of the CLI's `Write` and `Edit` asks, computed by Keen's own
 * write_file / edit_file: their filesystem guard decides what may be read, so
 * a protected or secret file yields no preview (the prompt shows the input).
 */
export function cliPreview(tools: Tool[]) {
  return async (tool: string, input: Record<string, unknown>): Promise<ChangePreview | undefined> => {
    if (typeof input.file_path !== "string") return undefined;
    const known = cliTool(tool);
    if (!known?.previewArgs || !known.keen) return undefined;
    const target = tools.find((t) => t.definition.name === known.keen);
    const preview = await target?.preview?.(known.previewArgs(input)).catch(() => undefined);
    return preview && typeof preview === "object" ? preview : undefined;
  };
}

function findExecutable(path: string, env: NodeJS.ProcessEnv): boolean {
  const candidates = path.includes("/") ? [path] : (env.PATH ?? "").split(delimiter).filter(Boolean).map((dir) => join(dir, path));
  return candidates.some((file) => {
    try {
      accessSync(file, constants.X_OK);
      return statSync(file).isFile();
    } catch {
      return false;
    }
  });
}

/** The CLI backend, its module loaded on the first CLI turn: embedded runs (and the start-up snapshot) never carry it. */
function lazyCliBackend(options: Parameters<typeof import("../agent/cli-backend.js").createCliBackend>[0]): TurnBackend {
  let backend: Promise<TurnBackend> | undefined;
  return {
    name: "cli",
    async run(turn) {
      backend ??= import("../agent/cli-backend.js").then((m) => m.createCliBackend(options));
      return (await backend).run(turn);
    },
  };
}
