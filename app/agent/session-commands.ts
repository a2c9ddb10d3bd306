import type { CommandOf } from "../../protocol/commands.js";
import type { KeenEvent } from "../../protocol/events.js";
import { CodedError } from "../../protocol/errors.js";
import { UnknownSessionError, type SessionMeta } from "../../storage/store.js";
import { listCheckpoints } from "./checkpoints.js";
import type { EngineContext } from "./engine-context.js";
import { historyEvents } from "./engine-session.js";
import { forkSession } from "./rewind.js";

/* The commands that choose or list sessions: `new-session`, `resume-session`, `fork-session`, `list-sessions`, `list-checkpoints`. */

/** A fresh session in the same (or the given) directory, with the model chosen for this one; standing rules do not carry over. */
export async function newSession(ctx: EngineContext, command: CommandOf<"new-session">): Promise<void> {
  if (ctx.active()) return ctx.refuse(command, "busy", "a turn is running: interrupt it first");
  const session = { id: ctx.options.newId(), cwd: command.cwd ?? ctx.session.cwd, model: ctx.session.model, started: false, seen: 0 };
  ctx.switchSession(session);
  ctx.gate.rules.clear();
  return ctx.respond(command, true, { data: { session_id: session.id, cwd: session.cwd } });
}

export async function resume(ctx: EngineContext, command: CommandOf<"resume-session">): Promise<void> {
  if (ctx.active()) return ctx.refuse(command, "busy", "a turn is running: interrupt it first");
  const meta = await ctx.store.resolve(command.session).catch((error) => {
    throw error instanceof UnknownSessionError ? new CodedError(error.message, "unknown_session") : error;
  });
  await switchTo(ctx, meta, await ctx.store.load(meta.id), command.cwd ?? meta.cwd, command.replay);
  return ctx.respond(command, true, { data: { session_id: meta.id, cwd: ctx.session.cwd, model: meta.model, title: meta.title } });
}

/** Copies a stored session's history before a prompt into a new session and switches to it, as a resume does. */
export async function fork(ctx: EngineContext, command: CommandOf<"fork-session">): Promise<void> {
  if (ctx.active()) return ctx.refuse(command, "busy", "a turn is running: interrupt it first");
  if (!command.session && !ctx.session.meta) return ctx.refuse(command, "unknown_session", "the current session has no turn yet: nothing to fork");
  const made = await forkSession(ctx.store, command.session ?? ctx.session.id, command.at, ctx.options.newId);
  await switchTo(ctx, made.meta, made.events, made.meta.cwd, command.replay);
  return ctx.respond(command, true, { data: { session_id: made.meta.id, parent: made.meta.parent!.id, at: made.at, ...(made.text !== undefined ? { text: made.text } : {}) } });
}

export async function listSessions(ctx: EngineContext, command: CommandOf<"list-sessions">): Promise<void> {
  const all = await ctx.store.list();
  return ctx.respond(command, true, { data: command.cwd ? all.filter((s) => s.cwd === command.cwd) : all });
}

export async function listSessionCheckpoints(ctx: EngineContext, command: CommandOf<"list-checkpoints">): Promise<void> {
  const checkpoints = ctx.session.meta ? listCheckpoints(await ctx.store.load(ctx.session.id)) : [];
  return ctx.respond(command, true, { data: { session_id: ctx.session.id, checkpoints } });
}

/** Makes a stored session the engine's (resume, fork): its standing permission rules, and its history replayed when asked. */
async function switchTo(ctx: EngineContext, meta: SessionMeta, events: KeenEvent[], cwd: string, replay: boolean | undefined): Promise<void> {
  ctx.switchSession({ id: meta.id, meta, cwd, started: false, seen: events.length });
  ctx.gate.restore(events);
  if (replay) for (const event of historyEvents(events)) await ctx.replay(event);
}
