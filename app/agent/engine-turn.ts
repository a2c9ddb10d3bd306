import type { CommandOf } from "../../protocol/commands.js";
import { PROTOCOL_VERSION } from "../../protocol/kinds.js";
import type { ContentBlock } from "../../protocol/messages.js";
import { CodedError } from "../../protocol/errors.js";
import type { SessionStatus } from "../../storage/store.js";
import type { ExpandedCommand } from "../extensions/commands.js";
import { blockedOutcome } from "../extensions/hook-points.js";
import { promptImageBlocks } from "../tools/prompt-images.js";
import type { Tool } from "../tools/tool.js";
import { embeddedBackend } from "./backend.js";
import type { EngineContext } from "./engine-context.js";
import { loadSession, type CurrentSession } from "./engine-session.js";
import { attachNews } from "./engine-setups.js";
import type { EngineSetup } from "./engine-types.js";
import { rewindContext } from "./rewind.js";
import { buildResult } from "./turn-result.js";
import { shellContext } from "./user-shell.js";
import type { StopReason } from "./verdict.js";

/*
 * One prompt's turn, in the two parts the engine runs around its claim (engine.ts `turn` keeps the
 * lifecycle: the claim, abort and timeout, the recorder, the release and the prompt's response).
 */

/** A prompt ready to run: the setup its turn uses, its text (a custom command expanded), the tools it narrows to, its images. */
export interface ReadyPrompt {
  prepared: EngineSetup;
  text: string;
  only?: string[];
  images: ContentBlock[];
}

/**
 * Everything about a prompt that can refuse it, before its session is claimed: the setup, a custom
 * command's expansion and model, its images. Contract: throws a coded error for a prompt that cannot run.
 */
export async function readyPrompt(ctx: EngineContext, prompt: CommandOf<"prompt">, current: CurrentSession): Promise<ReadyPrompt> {
  let prepared = await ctx.setupFor(current);
  let text = prompt.text;
  let only: string[] | undefined;
  if (prompt.command) {
    const expanded = expandCommand(prepared, prompt.command, prompt.text);
    text = expanded.text;
    only = expanded.allowedTools;
    // The command's model runs this turn only: the session keeps the one it had.
    if (expanded.model) prepared = await ctx.setupFor({ ...current, model: commandModel(ctx, expanded.model) });
  }
  // Read and checked before the session is claimed: a prompt with an image Keen cannot send is refused whole.
  if (prompt.images?.length && !prepared.provider) throw new CodedError("images need Keen's own loop; the CLI runner takes none", "bad_image");
  const images = prompt.images?.length ? await promptImageBlocks(prompt.images, prepared.readImage) : [];
  return { prepared, text, only, images };
}

/** The claimed turn as the engine hands it over. */
export interface ClaimedTurn {
  ready: ReadyPrompt;
  current: CurrentSession;
  /** The session was in the store before this turn (else the turn created it: nothing to load). */
  wasStored: boolean;
  /** When the turn's `duration_ms` counts from. */
  started: number;
  signal: AbortSignal;
  /** Why the turn was stopped (interrupt, timeout, store), once it was. */
  stopped(): { reason: StopReason; message?: string } | undefined;
}

/**
 * Runs a claimed turn to its `result` event: loads the session, emits `session-start` the first time,
 * runs the hooks and the backend, and emits the result. Rejects only when the store cannot be read or
 * written; the caller stores, releases and answers.
 */
export async function runClaimedTurn(ctx: EngineContext, turn: ClaimedTurn): Promise<{ status: SessionStatus; answer: { session_id: string; status: string } }> {
  const { store, gate, emit, options } = ctx;
  const { ready: { prepared, text, only, images }, current, wasStored, signal } = turn;
  // A session created by this turn has nothing stored to read yet.
  const loaded = wasStored ? await loadSession(store, current) : { history: [], events: [], appended: [] };
  gate.restore(loaded.events);
  for (const event of loaded.appended) await ctx.replay(event);
  const kit = prepared.perTurn();
  // A custom command's allowed-tools only narrows the session's tools; it never adds one.
  const kept = (list: Tool[]) => (only ? list.filter((t) => only.includes(t.definition.name)) : list);
  const tools = [...kept(prepared.tools), ...kit.tools];
  const first = !current.started;
  if (!current.started) {
    current.started = true;
    await emit({
      kind: "session-start", model: prepared.modelRef, cwd: current.cwd, tools: tools.map((t) => t.definition.name),
      protocol_version: PROTOCOL_VERSION, resumed: wasStored, permission_mode: gate.mode, headless: options.headless,
      ...(prepared.sandbox ? { sandboxed: prepared.sandbox.sandboxed } : {}),
      ...(prepared.sandbox?.fallback ? { sandbox_fallback: prepared.sandbox.fallback } : {}),
    });
  }
  attachNews(prepared, emit);
  // Hooks (app/extensions/hook-points.ts): around the gate, as a policy, watching the turn's events, and before it.
  const hooks = prepared.hooks?.forTurn({
    sessionId: current.id, cwd: current.cwd, model: prepared.modelRef, mode: () => gate.mode, emit, gate, interactive: options.interactive, signal,
  });
  const before = await hooks?.beforeTurn(text, first ? (wasStored ? "resume" : "startup") : undefined);
  if (before?.blocked && !wasStored) await store.updateMeta(current.id, { title: "(prompt blocked by a hook)" });
  const children = { ref: prepared.modelRef, price: prepared.price, ...(prepared.agentModel ? { resolve: prepared.agentModel } : {}) };
  const backend = prepared.provider ? (prepared.backend ?? embeddedBackend(prepared.provider, children)) : prepared.backend;
  const outcome = before?.blocked ? blockedOutcome(before.blocked) : await backend.run({
    cwd: current.cwd, events: loaded.events, permissionMode: gate.mode,
    sessionId: current.id, turnId: options.newId(), tools, history: loaded.history,
    currentTools: () => [...kept(prepared.tools), ...kit.tools],
    system: prepared.system,
    // The user's own commands (and file rewinds) since the last prompt come first: context for this one.
    user: { role: "user", content: [...shellContext(loaded.events), ...rewindContext(loaded.events), ...(before?.context ?? []), { type: "text", text }, ...images], headless: options.headless },
    emit: hooks?.emit ?? emit, requester: hooks?.requester ?? gate, retry: { ...options.retry, ...prepared.retry }, signal,
    policies: [...kit.policies, ...(hooks?.policies ?? [])],
  });
  const result = buildResult({ sessionId: current.id, outcome, policies: kit.policies, stop: turn.stopped(), started: turn.started, window: prepared.contextWindow, price: prepared.price });
  if (result.error) await emit({ kind: "error", message: result.error, ...(result.code ? { error_code: result.code } : {}) });
  await emit({ kind: "result", ...result.result });
  return { status: result.result.status, answer: { session_id: current.id, status: result.result.status } };
}

/** A `prompt` naming a custom command: its expansion, or a coded error. */
function expandCommand(prepared: EngineSetup, name: string, args: string): ExpandedCommand {
  if (!prepared.expandCommand) throw new CodedError("this session's runner has no custom commands", "unknown_command");
  const expanded = prepared.expandCommand(name, args);
  if (!expanded) {
    const known = prepared.listCommands?.().map((c) => c.name) ?? [];
    throw new CodedError(`no custom command "${name}"${known.length ? `; commands: ${known.join(", ")}` : ""}`, "unknown_command");
  }
  return expanded;
}

function commandModel(ctx: EngineContext, model: string): string {
  try {
    return ctx.options.checkModel(model);
  } catch (error) {
    throw new CodedError(`the custom command's model: ${error instanceof Error ? error.message : String(error)}`, "unknown_model");
  }
}
