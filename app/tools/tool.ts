import type { ToolDefinition } from "../../protocol/provider.js";
import type { FileGuard } from "../permissions/guard.js";
import type { CallView, PlanEntry, ToolKind, ToolLocation } from "../../protocol/events.js";
import type { Redactor } from "../permissions/redact.js";
import type { SkillCatalog } from "../extensions/skills.js";
import type { ChangePreview } from "../permissions/requester.js";
import type { CommandSandbox, NetworkAsk } from "../sandbox/runtime.js";
import type { JobRegistry } from "./jobs.js";

/** What a tool result carries: `content` for the model, `details` for UIs (e.g. `{ path, diff }`). */
export interface ToolResult {
  content: string;
  is_error: boolean;
  details?: Record<string, unknown>;
  /** Images for the model (base64), for providers that take them; `content` must describe them for the others. */
  images?: { media_type: string; data: string }[];
  /** The model's whole plan now (todo_write): the tool runner emits it as a `plan-update` event. */
  plan?: PlanEntry[];
  /** The skill this call loaded (the skill tool): the tool runner emits it as a `skill-loaded` event. */
  skill?: { name: string; path: string };
}

/** Set once per session: where tools run and what guards them. */
export interface ToolContext {
  /** The session cwd: relative paths resolve here, bash runs here. */
  cwd: string;
  /** The git root of cwd (cwd itself outside git): writes stay inside it. */
  workspace: string;
  guard: FileGuard;
  /** Environment for child processes, provider keys already removed. */
  env: NodeJS.ProcessEnv;
  /**
   * Known secret values to hide from the model. createTools applies it to every
   * result; a tool that cuts its output (bash) also redacts before cutting, so a
   * cut never leaves part of a secret.
   */
  redactor?: Redactor;
  /** Set when bash runs confined (README "Sandbox"); absent: commands run with the user's rights. */
  sandbox?: CommandSandbox;
  /** Where read_file, write_file and edit_file read and write text instead of the disk (an ACP client's editor). */
  files?: FileAccess;
  /** The session's Agent Skills (app/extensions/skills.ts), for the skill tool; absent: none. */
  skills?: SkillCatalog;
  /** Keen's config directory (user-level agent definitions live in its `agents/`); absent: none are read. */
  configDir?: string;
  /** web_fetch's host lists and timeout (user config `web`, with `sandbox.network.allowedDomains` allowed too). */
  web?: WebSettings;
  /** Each grep and glob call's time budget (user config `search.budgetMs`); absent: SEARCH_BUDGET_MS. */
  searchBudgetMs?: number;
  /** The session engine's background jobs (bash `background: true`, job_output, job_kill); absent: none can start. */
  jobs?: JobRegistry;
  /**
   * The `provider/model` a custom agent's `model` (e.g. `haiku`) runs on in this session (app/cli/agent-models.ts),
   * for the task call's title while it runs; undefined when it cannot be used (the call then fails, saying why).
   */
  agentModel?(name: string): string | undefined;
}

/** What the user's config says about web_fetch (docs/config.md, `web`). */
export interface WebSettings {
  /** Fetched without asking, in every mode, private addresses included (`web.allowedDomains` + `sandbox.network.allowedDomains`). */
  allowedDomains?: string[];
  /** Never fetched (`web.deniedDomains`). */
  deniedDomains?: string[];
  timeoutMs?: number;
}

/**
 * File text kept by someone else: an ACP client that offered `fs/read_text_file` and
 * `fs/write_text_file`, so unsaved editor buffers are what the model reads and edits land
 * in the editor. The tools call it only with an absolute real path the filesystem guard has
 * approved, after the same checks as for the disk (a refused path never reaches it). Either
 * side may be absent (the client offered one): that side uses the disk. Text only: the
 * client decides the file's encoding. Contract: may throw; the tool turns the message into
 * its error result.
 */
export interface FileAccess {
  /** `signal`: the call's abort (a cancelled turn withdraws the request); previews pass none. */
  readText?(path: string, signal?: AbortSignal): Promise<string>;
  writeText?(path: string, text: string, signal?: AbortSignal): Promise<void>;
}

/** Per call: abort, and a channel for progress output (bash streams its output here). */
export interface ToolCallContext {
  signal: AbortSignal;
  onOutput?: (chunk: string) => void;
  /** Asks the user about a host outside the sandbox's allowlist (absent: nobody to ask, denied). */
  askHost?: NetworkAsk;
  /** Runs a child agent loop for this call (the `task` tool); absent where no loop hosts one (the CLI runner, tests). */
  subagent?: SubagentHost;
}

/**
 * What the turn loop offers a call that delegates to a subagent (app/agent/subagent.ts): the
 * parent's tools as of this step, and a child loop with a fresh context whose events carry
 * the call's id as `parent_tool_call_id`, whose permission requests go through the parent's
 * gate, which the parent's interrupt stops, and whose usage counts as the parent turn's.
 */
export interface SubagentHost {
  readonly tools: Tool[];
  run(request: SubagentRequest): Promise<SubagentOutcome>;
}

/** One child run: its system prompt, its task, the tools it may use (already narrowed), its step limit and model. */
export interface SubagentRequest {
  system: string;
  prompt: string;
  tools: Tool[];
  maxSteps: number;
  /** A model a custom agent names (an alias, a model id or `<provider>/<model>`); absent: the parent turn's. */
  model?: string;
}

/** How a child run ended: its final answer, as the turn loop reports a turn, and the model it ran on. */
export interface SubagentOutcome {
  status: "success" | "error" | "interrupted" | "max_turns";
  text: string;
  steps: number;
  errors: string[];
  /** `<provider>/<model>` the child ran on, when known. */
  model?: string;
  /** Set when the child never started because the requested model cannot be used: why not. */
  refused?: string;
}

/** What a write or edit would change, shown before it is allowed (`permission-request`). */
export type ToolPreview = ChangePreview;

/**
 * A tool. Contract: `run` may throw; the runner turns a throw into an error
 * result for the model. Input arrives already validated against `definition.inputSchema`
 * only when the tool validates it itself — tools parse their own input with zod.
 */
export interface Tool {
  definition: ToolDefinition;
  /**
   * What the tool does (protocol/events.ts ToolKind). The permission gate, undo, the TUI and ACP
   * decide by it, never by the tool's name. Absent: `other`, treated as the riskiest.
   */
  kind?: ToolKind;
  /** Whether a call may change anything; absent: everything but `read` and `search` kinds does. */
  mutates?: boolean;
  /**
   * Its calls run inside the command sandbox (`ctx.sandbox`), writes confined to the workspace:
   * when the sandbox is on and config allows it, `accept-edits` runs such an `exec` call without
   * asking, as it runs edits. Absent: an `exec` call asks in `accept-edits`.
   */
  sandboxed?: boolean;
  /**
   * It runs a shell command line given as `{ command }`: the user's own `!command` goes through
   * it (app/agent/user-shell.ts), so it gets the same sandbox, timeout, cap and redaction.
   */
  shell?: boolean;
  /**
   * Starts, in the background, what its first call would wait for (bash: the sandbox), once a turn's first
   * request has left: the set-up then overlaps the model's answer. Never throws.
   */
  warm?(): void;
  /**
   * Several calls of it in one step may run at the same time (a few at once, in the tool runner): it waits
   * on other work (a subagent's model) rather than racing other calls for the same files. Absent: calls run in order.
   */
  concurrent?: boolean;
  /** It reads or ends the shell tool's background jobs (job_output, job_kill): offered only while a `shell` tool is. */
  jobControl?: boolean;
  /** How a call with `input` reads for a human; absent: the tool's name and no locations. Contract: never throws. */
  describe?(input: Record<string, unknown>): { title: string; locations: ToolLocation[] };
  run(input: unknown, call: ToolCallContext): Promise<ToolResult>;
  /**
   * The change a call would make, computed without writing anything (write_file, edit_file);
   * a string when the call would fail, saying why. Contract: never writes, never throws for
   * a refused or missing file.
   */
  preview?(input: unknown): Promise<ToolPreview | string>;
}

/** True unless the kind only looks (reads, searches). */
export function kindMutates(kind: ToolKind): boolean {
  return kind !== "read" && kind !== "search";
}

/** The view of a call of `tool` with `input` (any JSON; a non-object counts as no arguments). */
export function callView(tool: Tool, input: unknown): CallView {
  const kind = tool.kind ?? "other";
  const args = input && typeof input === "object" && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
  const described = tool.describe?.(args);
  return {
    tool_kind: kind, mutates: tool.mutates ?? kindMutates(kind),
    title: described?.title || tool.definition.name, locations: described?.locations ?? [],
  };
}
