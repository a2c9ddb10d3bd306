import type { CommandOf } from "../../protocol/commands.js";
import { compactConversation, messageTokens } from "./compaction.js";
import type { EngineContext } from "./engine-context.js";
import type { EngineSetup } from "./engine-types.js";
import { runRewind } from "./rewind.js";
import { runUndo } from "./undo.js";
import { runUserShell } from "./user-shell.js";

/* The commands that hold the idle session like a turn, between turns: `compact`, `shell`, `undo` and `rewind`. */

/**
 * Manual compaction of the idle session: claims it like a turn (so a session
 * another process is running is refused), compacts its conversation and
 * stores the replacement. A failure leaves the conversation as it was.
 */
export async function compact(ctx: EngineContext, command: CommandOf<"compact">): Promise<void> {
  const { emit, refuse, respond, gate } = ctx;
  if (ctx.active()) return refuse(command, "busy", "a turn is running: wait for it or interrupt it first");
  const current = ctx.session;
  if (!current.meta) return refuse(command, "nothing_to_compact", "the session has no conversation to compact yet");
  await ctx.holdSession(current, "", async (prepared) => {
    if (prepared.provider) return true;
    await refuse(command, "compaction_failed", "compaction failed: not available with the CLI runner (the CLI keeps its own context)");
    return false;
  }, async (prepared, loaded, signal) => {
    const tokensBefore = messageTokens(loaded.history);
    const result = await compactConversation({
      provider: prepared.provider!, messages: loaded.history, keepTokens: prepared.compaction?.keepTokens ?? 0, trigger: "manual",
      instructions: command.instructions, tokensBefore, signal, retry: { ...ctx.options.retry, ...prepared.retry },
      emit: prepared.hooks?.forTurn({
        sessionId: current.id, cwd: current.cwd, model: prepared.modelRef, mode: () => gate.mode, emit, gate, interactive: false, instructions: command.instructions, signal,
      }).emit ?? emit,
    });
    await ctx.flush();
    if (!result.ok) return await refuse(command, "compaction_failed", `compaction failed: ${result.error}`);
    await respond(command, true, { data: { session_id: current.id, tokens_before: tokensBefore, tokens_after: result.tokensAfter } });
  });
}

/**
 * The user's own command (`shell`, the TUI's `!command`): holds and claims the session like a turn (created
 * by it when new), runs through the session's bash without the permission gate, and stores its `shell`
 * event, which the next prompt carries to the model. `interrupt` kills it.
 */
export async function shell(ctx: EngineContext, command: CommandOf<"shell">): Promise<void> {
  if (ctx.active()) return ctx.refuse(command, "busy", "a turn is running: wait for it or interrupt it first");
  if (!command.command.trim()) return ctx.refuse(command, "empty_prompt", "empty command");
  const current = ctx.session;
  await ctx.holdSession(current, `!${command.command}`, async () => true, async (prepared, _loaded, signal) => {
    const outcome = await runUserShell({ tools: prepared.tools, command: command.command, shellId: ctx.options.newId(), emit: ctx.emit, signal });
    await ctx.flush();
    await ctx.respond(command, true, { data: { session_id: current.id, ...outcome } });
  });
}

/** Reverts the latest turn's writes and edits still in place; without `confirm`, only says what it would do. */
export async function undo(ctx: EngineContext, command: CommandOf<"undo">): Promise<void> {
  const { respond, refuse } = ctx;
  if (ctx.active()) return refuse(command, "busy", "a turn is running: interrupt it first");
  if (!ctx.session.meta) return refuse(command, "nothing_to_undo", "nothing to undo: the session has no turn yet");
  const current = ctx.session;
  const answer = async (prepared: EngineSetup) => {
    const result = await runUndo(await ctx.store.load(current.id), async () => prepared, command.confirm === true, ctx.emit);
    await ctx.flush();
    return result.ok ? respond(command, true, { data: result.data }) : refuse(command, result.code, result.error, result.data);
  };
  // Only a confirmed undo writes (files and its `rewind` event): it holds the session like a turn.
  if (!command.confirm) return answer(await ctx.setupFor(current));
  await ctx.holdSession(current, "", async () => true, answer);
}

/** Rewinds the held session's conversation and/or files to just before a prompt (app/agent/rewind.ts). */
export async function rewind(ctx: EngineContext, command: CommandOf<"rewind">): Promise<void> {
  const { respond, refuse } = ctx;
  if (ctx.active()) return refuse(command, "busy", "a turn is running: interrupt it first");
  if (!ctx.session.meta) return refuse(command, "nothing_to_rewind", "nothing to rewind: the session has no prompt yet");
  const current = ctx.session;
  await ctx.holdSession(current, "", async () => true, async (prepared) => {
    const answer = await runRewind(current.id, await ctx.store.load(current.id), command, prepared, ctx.emit);
    await ctx.flush();
    return answer.ok ? respond(command, true, { data: answer.data }) : refuse(command, answer.code, answer.error, answer.data);
  });
}
