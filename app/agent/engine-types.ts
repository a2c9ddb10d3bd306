import type { EventBus } from "../../protocol/bus.js";
import type { EngineClient } from "../../protocol/client.js";
import type { CommandId, PermissionMode } from "../../protocol/commands.js";
import type { EventDraft } from "../../protocol/events.js";
import type { Provider } from "../../protocol/provider.js";
import type { ModelPrice } from "../../protocol/usage.js";
import type { SessionStore } from "../../storage/store.js";
import type { Redactor } from "../permissions/redact.js";
import type { Tool } from "../tools/tool.js";
import type { ImageReader } from "../tools/prompt-images.js";
import type { JobInfo } from "../tools/jobs.js";
import type { CustomCommandInfo, ExpandedCommand } from "../extensions/commands.js";
import type { SkillInfo, SkippedSkill } from "../extensions/skills.js";
import type { HookSet } from "../extensions/hook-points.js";
import type { TurnBackend } from "./backend.js";
import type { ChildModel } from "./subagent.js";
import type { CompactionSettings } from "./compaction.js";
import type { CurrentSession } from "./engine-session.js";
import type { TurnPolicy } from "./policy.js";
import type { RetryPolicy } from "./retry.js";
import type { StopReason } from "./verdict.js";

/* The session engine's types (app/agent/engine.ts): what it is given and what its composition root holds. */

/**
 * What a session needs to run turns with one model in one directory; built by the composition root.
 * Either Keen's own loop talks to a `provider`, or a `backend` runs whole turns (the CLI runner),
 * and then nothing in Keen talks to a model: no stand-in provider.
 */
export type EngineSetup = SetupBase & ({ provider: Provider; backend?: TurnBackend } | { backend: TurnBackend; provider?: undefined });

/** What every session setup has, whoever runs its turns. */
export interface SetupBase {
  /** `<provider>/<model>` */
  modelRef: string;
  /** Read again before every request: MCP servers add and remove tools while a session runs. */
  readonly tools: Tool[];
  /**
   * Events of the session's helpers that happen on their own time (an MCP server failing, its
   * tool list changing). The engine attaches its own emit once the session's `session-start` is out,
   * so what happened during setup follows it (with `earlyNews`, as soon as someone subscribes).
   * Called again, it only re-points where later news goes.
   */
  attach?(emit: (event: EventDraft) => Promise<void>): void;
  system: string;
  contextWindow: number;
  /** The model's list price, for the result's `cost_usd` estimate. */
  price?: ModelPrice;
  /** Hides the secrets this setup knows of (provider keys, its MCP servers' values) in every event from now on. */
  redactor?: Pick<Redactor, "redact" | "redactDeep">;
  /** Ends what the setup started (MCP servers); the engine calls it when the setup is replaced or the engine ends. */
  close?(): Promise<void>;
  /** Ends what outlives a setup's replacement (background jobs, shared by an engine's setups); called once, when the engine ends. */
  end?(): Promise<void>;
  /** The engine's background jobs (app/tools/jobs.ts), the same registry in each of its setups: `kill-job` ends one. */
  jobs?: JobControl;
  /** Compaction settings: the `compact` command uses `keepTokens` (the automatic policy is in `perTurn`). */
  compaction?: CompactionSettings;
  /** The mode this session starts in: flags, else config, else the front end's default; narrowed by the project. */
  permissionMode?: PermissionMode;
  /** The project config's mode: `set-permission-mode` never goes looser than this. */
  projectMode?: PermissionMode;
  /** Whether bash runs sandboxed; `fallback` says why not when the sandbox was wanted (auto) but unavailable. */
  sandbox?: { sandboxed: boolean; fallback?: string; bashConfined: boolean };
  /** Retry settings of this session's config, over the engine's defaults. */
  retry?: Partial<RetryPolicy>;
  /** A fresh list per turn (policies keep per-turn state), with any tools they add. */
  perTurn(): { policies: TurnPolicy[]; tools: Tool[] };
  /** `undo`: the file's text now equals `expected` (an error message otherwise, e.g. changed since). */
  checkFile?(path: string, expected: string): string | undefined;
  /** `undo`: puts `content` back (null: removes the file the turn created), through the filesystem guard. */
  restoreFile?(path: string, content: string | null): string | undefined;
  /** `list-files`: the session directory's paths matching `query`, as its filesystem guard allows them (app/tools/file-list.ts). */
  listFiles?(query: string, limit: number): Promise<{ paths: string[]; truncated: boolean }>;
  /** A prompt's `{ path }` images: read through the session's filesystem guard (absent: such prompts are refused). */
  readImage?: ImageReader;
  /** `list-commands`: the custom commands (app/extensions/commands.ts). */
  listCommands?(): CustomCommandInfo[];
  /** `list-skills`: the Agent Skills, read again (app/extensions/skills.ts). */
  listSkills?(): { skills: SkillInfo[]; skipped: SkippedSkill[] };
  /** The session's hooks (app/extensions/hook-points.ts); absent when none is configured or trusted. */
  hooks?: HookSet;
  /** A `prompt` naming a custom command: its text, model and narrowed tools; undefined for no such command. */
  expandCommand?(name: string, args: string): ExpandedCommand | undefined;
  /** A model a custom agent names, for its subagent (app/cli/agent-models.ts); rejects with why it cannot be used. Absent: none but the session's. */
  agentModel?(name: string): Promise<ChildModel>;
}

/** What the engine does with background jobs (a JobRegistry): find one, end one (resolves once it has ended). */
export interface JobControl {
  list(): JobInfo[];
  /** `already`: this call ended nothing (the job had ended, or another kill was ending it). */
  kill(id: string): Promise<(JobInfo & { already?: boolean }) | undefined>;
}

/** Everything the engine is given (the test seam: no module mocking). */
export interface EngineOptions {
  store: SessionStore;
  bus: EventBus;
  /** Turns of this front end are headless (keen run, keen stdio): stored on each user message. */
  headless: boolean;
  /** Directory of new sessions. */
  cwd: string;
  /** The mode before the first session setup says otherwise. */
  permissionMode: PermissionMode;
  /**
   * The widest mode a `set-permission-mode` command may choose (keen stdio: the mode the user
   * started it with, by flag or user config; a client on stdin never goes wider). Absent: the
   * person at the keyboard chooses (the TUI, ACP), bounded only by the project's config.
   */
  modeCeiling?: ModeCeiling | (() => ModeCeiling | undefined);
  /** False when nobody can answer a permission request (one-shot keen run). */
  interactive: boolean;
  /** Builds provider, tools and prompt for a session; throws an Error whose message is shown. */
  prepare(session: { id: string; cwd: string; model?: string }): Promise<EngineSetup>;
  /** Checks a `provider/model` reference (`set-model`); throws with a message naming what to set. */
  checkModel(ref: string): string;
  /** The configured providers' models; the engine marks the session's current one (`current`) and lists its provider first. */
  listModels(): ModelChoice[];
  retry: RetryPolicy;
  /** Bounds each turn (keen stdio `--timeout`). */
  turnTimeoutMs?: number;
  newId(): string;
  /** When the front end started: the first turn's `duration_ms` counts from here (keen run: flags and stdin included). */
  startedAt?: number;
  /** The first session: a stored one to continue (`meta`) or a fresh id. */
  initial?: Pick<CurrentSession, "id" | "meta" | "cwd" | "model">;
  /**
   * A line for a person about a failure no event can carry any more (the store failing after the
   * turn's `result`, which must stay the stream's last line). Default: stderr.
   */
  diagnose?(line: string): void;
  /**
   * Setup news (`attach`: MCP servers connecting or failing, config warnings) reaches a subscriber
   * as soon as it subscribes, through the engine's own emit, instead of after the first turn's
   * `session-start` (the TUI shows a screen before any prompt; headless streams keep session-start first).
   */
  earlyNews?: boolean;
  /** Hides known secrets in every event before the bus (so in the store and every output) and in titles, until a setup brings its own. */
  redactor?: Pick<Redactor, "redact" | "redactDeep">;
}

/** The widest permission mode a client may set, and where it comes from (for the refusal). */
export interface ModeCeiling {
  mode: PermissionMode;
  source: string;
}

/** One row of `list-models`. */
export interface ModelChoice {
  /** `<provider>/<model>` */
  model: string;
  provider: string;
  /** The provider's key is set (or it needs none). */
  available: boolean;
  /** The session's model now (set by the engine; a value given here is ignored). */
  current?: boolean;
}

/** The engine as its composition root holds it: a client, plus what only the process may do. */
export interface SessionEngine extends EngineClient {
  /** Stops the running turn for a reason only the process knows (signals, timeout, a gone reader). */
  stop(reason: StopReason, message?: string): void;
  /** Answers a line that is not a valid command (the stdio reader), in its place among the commands. */
  reject(message: string, id?: CommandId): void;
  /** Ends after every command sent so far is answered, the running turn and queued prompts included (stdin EOF); resolves once closed. */
  close(): Promise<void>;
  /** Resolves when the engine has shut down. */
  readonly done: Promise<void>;
  /** The current session's id. */
  readonly sessionId: string;
  /** True while a turn runs or prompts wait for one (read by the run facade, app/agent/run-facade.ts). */
  readonly busy: boolean;
  /** Resolves once no turn runs and no prompt waits. */
  idle(): Promise<void>;
  /**
   * Prepares the current session's setup now (the one the next turn uses), so a front end can
   * turn a usage error into its exit code before anything is stored. Rejects with prepare's error.
   */
  prepare(): Promise<EngineSetup>;
}
