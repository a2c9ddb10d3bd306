import type { Command, CommandOf } from "../../protocol/commands.js";
import { isWiderMode } from "../../protocol/modes.js";
import type { EngineContext } from "./engine-context.js";
import { listSessionModels } from "./engine-setups.js";
import type { EngineSetup } from "./engine-types.js";

/*
 * The commands that set or ask about the session's setup: `set-permission-mode`, `set-model`,
 * `list-models`, and the queries its setup serves (`list-files`, `list-commands`, `list-skills`).
 */

/** A mode no wider than the ceiling this process was started with, nor than the project's config. */
export async function setPermissionMode(ctx: EngineContext, command: CommandOf<"set-permission-mode">): Promise<void> {
  const { modeCeiling } = ctx.options;
  const ceiling = typeof modeCeiling === "function" ? modeCeiling() : modeCeiling;
  if (ceiling && isWiderMode(command.mode, ceiling.mode)) {
    return ctx.refuse(command, "permission_ceiling", `permission mode ${command.mode} is wider than ${ceiling.mode}, the mode this process was started with (${ceiling.source})`);
  }
  // The project's floor comes with the session's setup; without one yet (no provider), the turn applies it.
  const floor = await ctx.setupFor(ctx.session).then((v) => v.projectMode, () => undefined);
  if (floor && isWiderMode(command.mode, floor)) {
    return ctx.refuse(command, "permission_ceiling", `permission mode ${command.mode} is wider than this project's config allows (${floor})`);
  }
  ctx.chooseMode(command.mode);
  return ctx.respond(command, true, { data: { mode: command.mode } });
}

export async function setModel(ctx: EngineContext, command: CommandOf<"set-model">): Promise<void> {
  let model: string;
  try {
    model = ctx.options.checkModel(command.model);
  } catch (error) {
    return ctx.refuseError(command, error, "unknown_model");
  }
  ctx.session.model = model;
  return ctx.respond(command, true, { data: { model } });
}

export async function listModels(ctx: EngineContext, command: CommandOf<"list-models">): Promise<void> {
  const { session } = ctx;
  // The setup the session's turns use says its model; none is prepared for a model chosen since (set-model): the check normalises it.
  const chosen = session.model ?? session.meta?.model;
  return ctx.respond(command, true, { data: await listSessionModels(ctx.options, chosen, ctx.peekSetup(session) ?? (chosen ? undefined : ctx.setupFor(session))) });
}

/** Answers a query the session's setup serves (`list-files`, `list-commands`, `list-skills`); `missing` when its runner has none. */
export async function fromSetup(ctx: EngineContext, command: Command, serve: (prepared: EngineSetup) => unknown, missing: string): Promise<void> {
  const data = serve(await ctx.setupFor(ctx.session));
  if (data === undefined) return ctx.refuse(command, "failed", missing);
  return ctx.respond(command, true, { data: await data });
}
