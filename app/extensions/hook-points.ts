import { resolve } from "node:path";
import type { PermissionMode } from "../../protocol/commands.js";
import type { EventDraft } from "../../protocol/events.js";
import type { ContentBlock } from "../../protocol/messages.js";
import type { PermissionRequester } from "../permissions/requester.js";
import type { TurnPolicy } from "../agent/policy.js";
import type { TurnOutcome } from "../agent/turn.js";
import { emptyUsage } from "../../protocol/usage.js";
import { cliTool, cliToolName } from "../agent/cli-tools.js";
import { matcherMatches, toolNames, type HookEventName, type HookSpec } from "./hooks-config.js";
import { readAnswer, runHookCommand, type HookAnswer } from "./hooks-run.js";

/*
 * Where hooks run (docs/extensions.md "Hooks"). PreToolUse and PostToolUse wrap the
 * permission gate, the one point every tool call passes, Keen's own and the CLI runner's
 * relayed asks alike; Stop is a turn policy; SessionStart and UserPromptSubmit run before a
 * turn; PreCompact and Notification watch the turn's events. Every run is a `hook` event.
 */

type Emit = (event: EventDraft) => Promise<void>;

/** A session's hooks; absent when none is configured. */
export interface HookSet {
  forTurn(context: TurnHookContext): TurnHooks;
}

/** What the hooks of one turn (or one manual compaction) need from the engine. */
export interface TurnHookContext {
  sessionId: string;
  cwd: string;
  model: string;
  mode: () => PermissionMode;
  /** The engine's emit (hook events are stored with the turn's). */
  emit: Emit;
  /** The engine's permission gate. */
  gate: PermissionRequester;
  /** False for one-shot `keen run`: nobody waits for the turn's end. */
  interactive: boolean;
  /** A manual compaction's instructions (PreCompact's `custom_instructions`). */
  instructions?: string;
  /** The turn's abort: an interrupt kills the hooks running for it. */
  signal?: AbortSignal;
}

/** A turn's hook points. */
export interface TurnHooks {
  /** The gate with PreToolUse and PostToolUse around it. */
  requester: PermissionRequester;
  /** The turn's emit with PreCompact and Notification watching it. */
  emit: Emit;
  /** Stop, and a hook's `continue: false`. */
  policies: TurnPolicy[];
  /** SessionStart (`start` set on the session's first turn here) and UserPromptSubmit: context for the model, or the prompt blocked. */
  beforeTurn(prompt: string, start?: "startup" | "resume"): Promise<{ blocked?: string; context: ContentBlock[] }>;
}

/** A Stop hook may keep a turn going this many times; then the turn ends as the model ended it. */
const MAX_STOP_CONTINUATIONS = 5;

/** Claude Code's names for Keen's permission modes (`permission_mode` in a hook's input); the type holds it to the modes. */
const CLAUDE_MODES: Record<PermissionMode, string> = {
  ask: "default", "accept-edits": "acceptEdits",
  auto: "bypassPermissions", "read-only": "plan",
};

/** Claude Code's tools whose input names a file `file_path` where Keen's says `path`. */
const FILE_PATH_TOOLS = new Set(["Read", "Write", "Edit"]);

/** The hook points of `specs`, run in `workspace` with `env`; undefined when there are none. */
export function createHookSet(specs: HookSpec[], options: { workspace: string; env: NodeJS.ProcessEnv }): HookSet | undefined {
  if (!specs.length) return undefined;
  return { forTurn: (context) => turnHooks(specs, options, context) };
}

function turnHooks(specs: HookSpec[], options: { workspace: string; env: NodeJS.ProcessEnv }, ctx: TurnHookContext): TurnHooks {
  const has = (event: HookEventName) => specs.some((s) => s.event === event);
  let stopped: string | undefined;
  let continued = 0;

  /** Runs the hooks of `event` whose matcher selects `subject` (in parallel, each command once) and combines their answers. */
  async function fire(event: HookEventName, subject: string[] | undefined, fields: Record<string, unknown>, about: { tool_name?: string; tool_call_id?: string } = {}, signal?: AbortSignal): Promise<HookAnswer> {
    const seen = new Set<string>();
    const chosen = specs.filter((s) => s.event === event && (!subject || matcherMatches(s.matcher, subject)) && !seen.has(s.command) && seen.add(s.command));
    if (!chosen.length) return {};
    const input = {
      session_id: ctx.sessionId, transcript_path: "", cwd: ctx.cwd, permission_mode: CLAUDE_MODES[ctx.mode()], keen_permission_mode: ctx.mode(),
      hook_event_name: event, ...fields,
    };
    const env = { ...options.env, CLAUDE_PROJECT_DIR: options.workspace, KEEN_PROJECT_DIR: options.workspace, KEEN_SESSION_ID: ctx.sessionId };
    const runs = await Promise.all(chosen.map((spec) =>
      runHookCommand(spec.command, input, { cwd: options.workspace, env, timeoutMs: spec.timeoutMs, signal: signal ?? ctx.signal })));
    const answers = runs.map((run) => readAnswer(event, run));
    for (const [i, spec] of chosen.entries()) {
      const run = runs[i]!;
      const answer = answers[i]!;
      const decision = answer.stop ? "stop" : answer.permission ?? (answer.block ? "block" : undefined);
      const message = run.message ?? answer.block ?? answer.stop ?? answer.reason;
      await ctx.emit({
        kind: "hook", hook_event: event, matcher: spec.matcher, command: spec.command, source: spec.source,
        outcome: run.outcome === "ok" && (decision === "deny" || decision === "block" || decision === "stop") ? "blocked" : run.outcome,
        duration_ms: run.durationMs, exit_code: run.exitCode, ...about,
        ...(decision ? { decision } : {}), ...(answer.updatedInput ? { updated_input: true } : {}), ...(message ? { message } : {}),
      });
    }
    return combine(answers);
  }

  const notify = (type: "permission_prompt" | "idle_prompt", message: string) =>
    has("Notification") ? fire("Notification", [type], { message, title: "Keen", notification_type: type }).then(() => undefined) : undefined;

  const gate = ctx.gate;
  const requester: PermissionRequester = {
    wantsPreview: (req) => gate.wantsPreview?.(req) ?? false,
    async request(req, signal) {
      if (req.network || !has("PreToolUse")) return asked(req, signal);
      const claude = cliTool(req.tool) !== undefined;
      const name = claude ? req.tool : cliToolName(req.tool);
      const shaped = claude || !FILE_PATH_TOOLS.has(name) ? req.input : withFilePath(req.input, ctx.cwd);
      const answer = await fire("PreToolUse", toolNames(req.tool), {
        tool_name: name, ...(claude ? {} : { keen_tool_name: req.tool }), tool_input: shaped, tool_use_id: req.callId ?? "",
      }, { tool_name: req.tool, ...(req.callId ? { tool_call_id: req.callId } : {}) }, signal);
      if (answer.stop) stopped = answer.stop;
      if (answer.block || answer.permission === "deny" || answer.stop) {
        return { allow: false, reason: `Not executed: a PreToolUse hook blocked this call: ${answer.block ?? answer.reason ?? answer.stop ?? "no reason given"}` };
      }
      let next = req;
      if (answer.updatedInput) {
        const input = claude || !FILE_PATH_TOOLS.has(name) ? answer.updatedInput : withoutFilePath(answer.updatedInput, req.input, ctx.cwd);
        next = { ...req, input, ...(await req.describe?.(input)) };
      }
      if (answer.permission === "allow" || answer.permission === "ask") next = { ...next, hook: answer.permission };
      if (answer.permission === "ask" && !answer.updatedInput && !next.preview) next = { ...next, ...(await req.describe?.(next.input)) };
      const decision = await asked(next, signal);
      return decision.allow && answer.updatedInput ? { allow: true, input: next.input } : decision;
    },
    async afterTool(call, result, signal) {
      if (!has("PostToolUse")) return result;
      const claude = cliTool(call.tool) !== undefined;
      const name = claude ? call.tool : cliToolName(call.tool);
      const answer = await fire("PostToolUse", toolNames(call.tool), {
        tool_name: name, ...(claude ? {} : { keen_tool_name: call.tool }),
        tool_input: claude || !FILE_PATH_TOOLS.has(name) ? call.input : withFilePath(call.input, ctx.cwd),
        tool_response: { content: result.content, is_error: result.is_error }, tool_use_id: call.callId,
      }, { tool_name: call.tool, tool_call_id: call.callId }, signal);
      if (answer.stop) stopped = answer.stop;
      const notes = [answer.block && `A PostToolUse hook says: ${answer.block}`, answer.context].filter((n): n is string => Boolean(n));
      return notes.length ? { ...result, content: `${result.content}\n\n${notes.join("\n\n")}` } : result;
    },
  };

  /** The gate's answer; a Notification hook hears of a request a person will be asked. */
  async function asked(req: Parameters<PermissionRequester["request"]>[0], signal?: AbortSignal) {
    const willAsk = ctx.interactive && !req.network && (req.hook === "ask" || (req.hook !== "allow" && gate.wantsPreview?.(req) === true));
    const pending = gate.request(req, signal);
    const notified = willAsk ? notify("permission_prompt", `Keen needs your permission to use ${cliToolName(req.tool)}`) : undefined;
    const [decision] = await Promise.all([pending, notified]);
    return decision;
  }

  const stopPolicy: TurnPolicy = {
    async onAnswer(text) {
      if (stopped || !has("Stop") || continued >= MAX_STOP_CONTINUATIONS) return undefined;
      const answer = await fire("Stop", undefined, { stop_hook_active: continued > 0, last_assistant_message: text });
      if (answer.stop || !answer.block) return undefined;
      continued++;
      return `A Stop hook asks you to continue before ending the turn: ${answer.block}`;
    },
    afterTools: () => (stopped ? "stop" : "continue"),
  };

  return {
    requester,
    policies: [stopPolicy],
    async emit(event) {
      await ctx.emit(event);
      if (event.kind === "compaction" && event.phase === "start" && has("PreCompact")) {
        const trigger = event.trigger === "manual" ? "manual" : "auto";
        await fire("PreCompact", [trigger], { trigger, custom_instructions: ctx.instructions ?? "" });
      } else if (event.kind === "turn-end" && ctx.interactive) {
        await notify("idle_prompt", "Keen is waiting for your input");
      }
    },
    async beforeTurn(prompt, start) {
      const context: string[] = [];
      if (start && has("SessionStart")) {
        const answer = await fire("SessionStart", [start], { source: start, model: ctx.model });
        if (answer.context) context.push(`SessionStart hook context:\n${answer.context}`);
      }
      if (has("UserPromptSubmit")) {
        const answer = await fire("UserPromptSubmit", undefined, { prompt });
        if (answer.block || answer.stop) {
          const blocked = `a UserPromptSubmit hook blocked the prompt: ${answer.block ?? answer.stop}`;
          await ctx.emit({ kind: "error", message: blocked, error_code: "hook_blocked" });
          return { blocked, context: [] };
        }
        if (answer.context) context.push(`UserPromptSubmit hook context:\n${answer.context}`);
      }
      // Marked as context: the `text` event and the transcript show only what the user typed.
      return { context: context.map((text) => ({ type: "text" as const, text, context: true as const })) };
    },
  };
}

/** How a turn whose prompt a hook blocked ends: an error, no step taken, the prompt never sent. */
export function blockedOutcome(message: string): TurnOutcome {
  return { status: "error", text: "", steps: 0, usage: emptyUsage(), errors: [message], assistant: [] };
}

/** Answers of several hooks as one: deny over ask over allow, the first block and stop, the last rewrite, every context. */
function combine(answers: HookAnswer[]): HookAnswer {
  const out: HookAnswer = {};
  for (const permission of ["deny", "ask", "allow"] as const) {
    const first = answers.find((a) => a.permission === permission);
    if (first) {
      out.permission = permission;
      if (first.reason) out.reason = first.reason;
      break;
    }
  }
  const block = answers.find((a) => a.block)?.block;
  if (block) out.block = block;
  const stop = answers.find((a) => a.stop)?.stop;
  if (stop) out.stop = stop;
  const updated = answers.filter((a) => a.updatedInput).at(-1)?.updatedInput;
  if (updated) out.updatedInput = updated;
  const context = answers.flatMap((a) => (a.context ? [a.context] : [])).join("\n\n");
  if (context) out.context = context;
  return out;
}

/** Keen's `path` as Claude Code's absolute `file_path` too, so a script reading `.tool_input.file_path` works. */
function withFilePath(input: unknown, cwd: string): unknown {
  if (!input || typeof input !== "object" || Array.isArray(input)) return input;
  const args = input as Record<string, unknown>;
  return typeof args.path === "string" && args.file_path === undefined ? { ...args, file_path: resolve(cwd, args.path) } : input;
}

/** A rewritten input back in Keen's shape: a changed `file_path` is the new `path`. */
function withoutFilePath(updated: Record<string, unknown>, original: unknown, cwd: string): Record<string, unknown> {
  const before = original && typeof original === "object" ? (original as Record<string, unknown>) : {};
  if (before.file_path !== undefined || typeof before.path !== "string") return updated;
  const { file_path: filePath, ...rest } = updated;
  if (typeof filePath === "string" && filePath !== resolve(cwd, before.path)) rest.path = filePath;
  return rest;
}
