import type { AvailableCommand, PermissionOption, SessionConfigOption, SessionModeState, SessionUpdate, StopReason, ToolCallUpdate } from "@agentclientprotocol/sdk";
import { request, type Request } from "../../protocol/client.js";
import { MODE_CYCLE, PERMISSION_MODE_LABELS, type PermissionMode } from "../../protocol/modes.js";
import type { ErrorCode, ResponseTo } from "../../protocol/responses.js";
import type { EventOf, KeenEvent } from "../../protocol/events.js";
import type { PromptImage } from "../../protocol/commands.js";
import { createAcpCommands } from "./commands.js";
import type { HostedSession } from "./host.js";
import { jobUpdate, permissionToolCall, planUpdate, replayUpdates, stopReasonOf, toolCallFinished, toolCallProgress, toolCallStarted } from "./updates.js";

/** A request the session cannot serve; `code` is the JSON-RPC error code the client gets, `errorCode` the engine's (its `data.error_code`). */
export class AcpFailure extends Error {
  constructor(message: string, readonly code: number, readonly errorCode?: ErrorCode) {
    super(message);
  }
}
/** JSON-RPC: the client sent something Keen refuses (a bad mode, an empty prompt). */
export const INVALID_PARAMS = -32602;
/** JSON-RPC: Keen could not do it (a provider failure, a session busy in another process). */
export const INTERNAL_ERROR = -32603;

/** The engine's refusals that are the client's doing: the JSON-RPC error is "invalid params"; any other is "internal". */
const CLIENT_ERRORS: ReadonlySet<ErrorCode> = new Set(["invalid", "empty_prompt", "bad_image", "permission_ceiling", "unknown_model", "unknown_session"]);
/** The engine's refusal as the client gets it: the JSON-RPC code, with Keen's error_code in `data`. */
const refused = (answer: { error: string; error_code: ErrorCode }) =>
  new AcpFailure(answer.error, CLIENT_ERRORS.has(answer.error_code) ? INVALID_PARAMS : INTERNAL_ERROR, answer.error_code);

/** Keen's permission modes as ACP session modes, in the order a client lists them. */
const MODES: { id: PermissionMode; name: string; description: string }[] = MODE_CYCLE.map((id) => ({ id, ...PERMISSION_MODE_LABELS[id] }));

/** The engine's answers to permission requests, offered to the client as ACP options (the ids are the engine's decisions). */
const DECISIONS = ["allow-once", "allow-always", "deny", "deny-always"] as const;

/** What a session needs from the ACP connection. */
export interface AcpSessionOptions {
  hosted: HostedSession;
  /** Sends one `session/update`; awaited, so a slow client slows the turn instead of growing memory. */
  notify(update: SessionUpdate): Promise<void>;
  /** `session/request_permission`: the chosen option id, or undefined when the client cancelled or the signal withdrew it (never a throw then). */
  askPermission(toolCall: ToolCallUpdate, options: PermissionOption[], signal: AbortSignal): Promise<string | undefined>;
  log(line: string): void;
}

/** One ACP session: ACP requests in as engine commands, engine events out as `session/update`s. */
export interface AcpSession {
  readonly id: string;
  modes(): SessionModeState;
  /** The slash commands this session offers. */
  commands(): AvailableCommand[];
  /** Sends them as `available_commands_update` (after the answer that made the session known to the client). */
  announce(): Promise<void>;
  configOptions(): Promise<SessionConfigOption[]>;
  /** Takes up the stored session (its permission decisions too); with `replay`, sends its history as updates first. */
  load(replay: boolean): Promise<void>;
  /** Runs one turn, or the slash command the text is; resolves with the stop reason, throws AcpFailure when it could not run or failed. */
  /** `images`: the prompt's image blocks (ACP session/prompt), sent with the text; a slash command ignores them. */
  prompt(text: string, images?: PromptImage[]): Promise<StopReason>;
  /** Interrupts the running turn (its prompt answers `cancelled`) and withdraws open permission requests. */
  cancel(): void;
  setMode(mode: string): Promise<void>;
  setConfigOption(configId: string, value: unknown): Promise<SessionConfigOption[]>;
  close(): Promise<void>;
}

/**
 * Binds one hosted engine to the ACP connection. Contract: the event
 * subscriber never throws (a failed notification is logged, the turn goes
 * on); every command is sent with an id and its `response` awaited.
 */
export function createAcpSession(options: AcpSessionOptions): AcpSession {
  const { hosted, notify, log } = options;
  const asking = new Set<AbortController>();
  let mode = hosted.mode;
  let model = hosted.model;
  let lastResult: EventOf<"result"> | undefined;
  let cancelled = false;
  let prompts = 0;
  // Calls announced and not yet finished: a turn that ends leaves none spinning in the client.
  const open = new Set<string>();
  // Background jobs whose start the client was sent (they outlive turns: a turn's end does not close them).
  const jobsShown = new Set<string>();
  // Text or thinking of the current step went out: a retry then restarts it, and the client is told.
  let streamed = false;

  const unsubscribe = hosted.client.subscribe(async (event) => {
    try {
      await onEvent(event);
    } catch (error) {
      log(`could not send an update to the client: ${messageOf(error)}`);
    }
  });

  /** Sends a command and waits for its typed response (after this session's subscriber has taken every event before it). */
  function call<C extends Request>(command: C): Promise<ResponseTo<C["kind"]>> {
    return request(hosted.client, command);
  }

  async function onEvent(event: KeenEvent): Promise<void> {
    if (event.replay) {
      for (const update of replayUpdates(event)) await notify(update);
      return;
    }
    switch (event.kind) {
      case "text-delta":
        streamed = true;
        return notify({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: event.delta } });
      case "thinking-delta":
        streamed = true;
        return notify({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: event.delta } });
      case "retry":
        if (!streamed) return;
        streamed = false;
        // ACP cannot take back chunks already shown: say that the answer starts again.
        return notify({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `\n\n(retrying: ${event.reason})\n\n` } });
      case "text":
      case "thinking":
        streamed = false;
        return;
      case "tool-use":
        streamed = false;
        open.add(event.tool_call_id);
        return notify(toolCallStarted(event));
      case "tool-start":
        return notify({ sessionUpdate: "tool_call_update", toolCallId: event.tool_call_id, status: "in_progress" });
      case "tool-update":
        return notify(toolCallProgress(event));
      case "tool-result":
        open.delete(event.tool_call_id);
        return notify(toolCallFinished(event));
      case "plan-update":
        return notify(planUpdate(event));
      case "job": {
        const announced = jobsShown.has(event.job_id);
        if (event.state === "running") jobsShown.add(event.job_id);
        return notify(jobUpdate(event, announced));
      }
      case "permission-request":
        // Not awaited: the answer comes back as a command, and the bus must keep flowing meanwhile.
        void ask(event);
        return;
      case "session-start":
        // The mode the engine runs the session in. Today it always matches what the client was told (the setup that
        // named it narrowed it the same way); should the engine ever settle on another, the client still hears of it.
        return modeIs(event.permission_mode as PermissionMode);
      case "result":
        lastResult = event;
        for (const toolCallId of open) await notify({ sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
        open.clear();
        return;
      default:
        return;
    }
  }

  async function ask(event: EventOf<"permission-request">): Promise<void> {
    const controller = new AbortController();
    asking.add(controller);
    const choices: PermissionOption[] = [
      { optionId: "allow-once", name: "Allow", kind: "allow_once" },
      { optionId: "allow-always", name: `Always allow ${event.tool_name}`, kind: "allow_always" },
      { optionId: "deny", name: "Reject", kind: "reject_once" },
      { optionId: "deny-always", name: `Always reject ${event.tool_name}`, kind: "reject_always" },
    ];
    let choice: string | undefined;
    try {
      choice = await options.askPermission(permissionToolCall(event), choices, controller.signal);
    } catch (error) {
      log(`permission request failed: ${messageOf(error)}`);
    } finally {
      asking.delete(controller);
    }
    // A cancelled turn has already withdrawn the request in the engine.
    if (cancelled) return;
    const decision = DECISIONS.find((d) => d === choice) ?? "deny";
    const message = choice === undefined ? "The request was cancelled." : undefined;
    await call({ kind: "permission-response", request_id: event.request_id, decision, ...(message ? { message } : {}) });
  }

  /** Records the engine's mode and tells the client when it is not what the client last heard. */
  async function modeIs(next: PermissionMode): Promise<void> {
    if (next === mode) return;
    mode = next;
    await notify({ sessionUpdate: "current_mode_update", currentModeId: next });
  }

  async function setMode(next: string): Promise<void> {
    const known = MODES.find((m) => m.id === next);
    if (!known) throw new AcpFailure(`unknown mode "${next}"; modes: ${MODES.map((m) => m.id).join(", ")}`, INVALID_PARAMS);
    const answer = await call({ kind: "set-permission-mode", mode: known.id });
    if (!answer.ok) throw refused(answer);
  }

  /** The custom commands as last listed (announce). */
  let custom: AvailableCommand[] = [];
  const slash = createAcpCommands({
    offers: hosted.offers, call, modes: MODES.map((m) => m.id), currentMode: () => mode, cancelled: () => cancelled,
    say: (text) => notify({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } }),
    // A change made on Keen's side (a /mode prompt): the client is told, as for any change it did not ask for.
    setMode: async (next) => {
      await setMode(next);
      await modeIs(next as PermissionMode);
    },
  });

  async function configOptions(): Promise<SessionConfigOption[]> {
    const answer = await call({ kind: "list-models" });
    const listed = answer.ok ? answer.data : [];
    const models = [model, ...listed.filter((m) => m.available && m.model !== model).map((m) => m.model)];
    return [{
      id: "model", name: "Model", category: "model", type: "select", currentValue: model,
      options: models.map((value) => ({ value, name: value })),
    }];
  }

  return {
    id: hosted.id,
    modes: () => ({ currentModeId: mode, availableModes: MODES }),
    commands: () => [...slash.list(), ...custom],
    async announce() {
      // The workspace's custom commands (docs/extensions.md) follow Keen's own; a name Keen uses stays Keen's.
      const answer = await call({ kind: "list-commands" });
      custom = (answer.ok ? answer.data : [])
        .filter((c) => !slash.list().some((own) => own.name === c.name))
        .map((c) => ({ name: c.name, description: c.description, ...(c.argument_hint ? { input: { hint: c.argument_hint } } : {}) }));
      return notify({ sessionUpdate: "available_commands_update", availableCommands: [...slash.list(), ...custom] });
    },
    configOptions,
    async load(replay) {
      const answer = await call({ kind: "resume-session", session: hosted.id, replay });
      if (!answer.ok) throw refused(answer);
    },
    async prompt(text, images = []) {
      cancelled = false;
      lastResult = undefined;
      const command = slash.match(text);
      if (command) {
        prompts++;
        return slash.run(command.name, command.arg).finally(() => prompts--);
      }
      slash.disarm();
      prompts++;
      const named = /^\/([a-z0-9][a-z0-9_.:-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
      const isCustom = named && custom.some((c) => c.name === named[1]);
      const withImages = images.length ? { images } : {};
      const answer = await call(isCustom ? { kind: "prompt", command: named[1]!, text: (named[2] ?? "").trim(), ...withImages } : { kind: "prompt", text, ...withImages })
        .finally(() => prompts--);
      if (!answer.ok) throw refused(answer);
      const outcome = stopReasonOf(lastResult, cancelled);
      if (typeof outcome === "object") throw new AcpFailure(outcome.error, INTERNAL_ERROR);
      return outcome;
    },
    cancel() {
      if (!prompts) return;
      cancelled = true;
      for (const controller of asking) controller.abort();
      hosted.client.send({ kind: "interrupt" });
    },
    async setMode(next) {
      // The client asked for it: no current_mode_update back.
      await setMode(next);
      mode = next as PermissionMode;
    },
    async setConfigOption(configId, value) {
      if (configId !== "model") throw new AcpFailure(`unknown config option "${configId}"; options: model`, INVALID_PARAMS);
      if (typeof value !== "string") throw new AcpFailure("the model option takes a provider/model value", INVALID_PARAMS);
      // Only what the select offered: a client must not reach models the user cannot pick in its menu.
      const [offered] = await configOptions();
      const values = offered?.type === "select" ? (offered.options as { value: string }[]).map((o) => o.value) : [];
      if (!values.includes(value)) throw new AcpFailure(`model "${value}" is not among the options: ${values.join(", ")}`, INVALID_PARAMS);
      const answer = await call({ kind: "set-model", model: value });
      if (!answer.ok) throw refused(answer);
      model = answer.data.model;
      return configOptions();
    },
    async close() {
      cancelled = true;
      for (const controller of asking) controller.abort();
      await hosted.close();
      unsubscribe();
    },
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
