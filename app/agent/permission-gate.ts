import type { CommandOf, PermissionMode } from "../../protocol/commands.js";
import type { EventDraft, KeenEvent } from "../../protocol/events.js";
import { gate, networkGate, webGate } from "../permissions/policy.js";
import type { PermissionDecision, PermissionRequest, PermissionRequester } from "../permissions/requester.js";

/** The engine's permission state for one session: mode, standing rules, open requests. */
export interface PermissionGate extends PermissionRequester {
  mode: PermissionMode;
  /** Standing answers per tool (`allow-always`, `deny-always`), rebuilt from stored events on resume. */
  readonly rules: Map<string, "allow" | "deny">;
  /** Applies a reply; returns an error message when no request with that id is open. */
  answer(command: CommandOf<"permission-response">): string | undefined;
  /** Rebuilds the standing rules from a session's stored events. */
  restore(events: KeenEvent[]): void;
  /** True while a request waits for an answer. */
  readonly waiting: boolean;
  /**
   * The front end will send no more commands (its input ended): the open requests and every later
   * ask are refused with a reason for the model, as in a one-shot run, so the turn can end.
   */
  endAnswers(): void;
  /** The sandbox confines commands and accept-edits may run sandboxed ones (set from the session's setup). */
  bashConfined: boolean;
}

type Reply = CommandOf<"permission-response">;

/**
 * Permissions as an event and a reply: a call the mode says to ask about
 * emits `permission-request` and waits for a `permission-response` (or the
 * turn's abort). Without anybody to ask (`interactive` false: one-shot
 * `keen run`), such a call is refused at once with a reason for the model.
 */
export function createPermissionGate(options: {
  mode: PermissionMode;
  interactive: boolean;
  emit: (event: EventDraft) => Promise<void>;
  newId: () => string;
}): PermissionGate {
  const rules = new Map<string, "allow" | "deny">();
  // "ended": endAnswers() came while the request was open.
  const open = new Map<string, (reply: Reply | "ended") => void>();
  let ended = false;
  const nobody = () => (ended ? "the client's input has ended: nobody can answer" : "this one-shot run has nobody to ask");
  // By what the call's tool declares (kind, mutates, sandboxed), never by its name; a standing rule is per tool.
  const decide = (req: Pick<PermissionRequest, "tool" | "kind" | "mutates" | "sandboxed" | "hook">) => {
    const ruled = gate(self.mode, rules.get(req.tool), { kind: req.kind, mutates: req.mutates, sandboxed: req.sandboxed, bashConfined: self.bashConfined });
    // A PreToolUse hook's allow or ask changes whether a person is asked, never a refusal.
    return ruled === "refuse" || !req.hook ? ruled : req.hook;
  };
  const self: PermissionGate = {
    mode: options.mode,
    bashConfined: false,
    rules,
    get waiting() {
      return open.size > 0;
    },
    wantsPreview: (req) => options.interactive && !ended && decide(req) === "ask",
    async request(req: PermissionRequest, signal?: AbortSignal): Promise<PermissionDecision> {
      if (req.network) return requestHost(req, signal);
      const decision = decide(req);
      if (decision === "allow") return { allow: true };
      if (decision === "refuse") {
        return {
          allow: false,
          reason: rules.get(req.tool) === "deny"
            ? `Not executed: the user denied ${req.tool} for the rest of this session.`
            : `Not executed: the session is in read-only mode, so ${req.tool} cannot run.`,
        };
      }
      if (!options.interactive || ended) return unasked(req);
      return ask(req, signal);
    },
    answer(reply) {
      const resolve = open.get(reply.request_id);
      if (!resolve) return `no permission request "${reply.request_id}" is waiting`;
      open.delete(reply.request_id);
      resolve(reply);
      return undefined;
    },
    endAnswers() {
      ended = true;
      for (const resolve of open.values()) resolve("ended");
      open.clear();
    },
    restore(events) {
      rules.clear();
      for (const event of events) if (event.kind === "permission-rule") rules.set(event.tool_name, event.decision);
    },
  };

  async function requestHost(req: PermissionRequest, signal?: AbortSignal): Promise<PermissionDecision> {
    // A network tool's own request (kind "network": web_fetch) or a sandboxed command's connection.
    const web = req.kind === "network";
    const host = req.tool.replace(/^(network|web):/, "");
    const decision = (web ? webGate : networkGate)(self.mode, rules.get(req.tool));
    if (decision === "allow") return { allow: true };
    const allowlist = `add it to ${web ? "web.allowedDomains" : "sandbox.network.allowedDomains"} in the user's Keen config to allow it`;
    const blocked = web ? `${host} was not fetched` : `the sandbox blocked ${host}`;
    if (decision === "refuse") {
      const why = rules.get(req.tool) === "deny" ? "the user denied it for this session"
        : web ? `the session is in ${self.mode} mode, which fetches only from hosts the config allows` : `the session is in ${self.mode} mode, which asks nobody`;
      return { allow: false, reason: `${blocked}: ${why}; ${allowlist}` };
    }
    if (!options.interactive || ended) return { allow: false, reason: `${blocked}: ${nobody()}; ${allowlist}` };
    const answer = await ask(req, signal);
    return answer.allow ? answer : { allow: false, reason: `${blocked}: ${answer.reason}` };
  }

  function unasked(req: PermissionRequest): PermissionDecision {
    const why = req.hook === "ask" ? "a PreToolUse hook asked for the user's approval" : `${req.tool} needs the user's approval in ${self.mode} mode`;
    return { allow: false, reason: `Not executed: ${why}, and ${nobody()}. Do without it.` };
  }

  async function ask(req: PermissionRequest, signal?: AbortSignal): Promise<PermissionDecision> {
    const requestId = options.newId();
    const reply = new Promise<Reply | "ended" | undefined>((resolve) => {
      open.set(requestId, resolve);
      signal?.addEventListener("abort", () => {
        open.delete(requestId);
        resolve(undefined);
      }, { once: true });
    });
    await options.emit({
      kind: "permission-request", role: "assistant", request_id: requestId, tool_name: req.tool,
      tool_call_id: req.callId ?? "", input: JSON.stringify(req.input ?? {}), ...(req.view ?? {}),
      ...(req.parentCallId ? { parent_tool_call_id: req.parentCallId } : {}),
      ...(req.preview ? { diff: req.preview.diff, path: req.preview.path } : {}),
      ...(req.preview?.new_text !== undefined ? { old_text: req.preview.old_text ?? null, new_text: req.preview.new_text } : {}),
    });
    const answer = await reply;
    if (!answer) return { allow: false, reason: "Not executed: the run was interrupted." };
    if (answer === "ended") return unasked(req);
    if (answer.decision === "allow-always" || answer.decision === "deny-always") {
      const rule = answer.decision === "allow-always" ? "allow" : "deny";
      rules.set(req.tool, rule);
      await options.emit({ kind: "permission-rule", tool_name: req.tool, decision: rule });
    }
    if (answer.decision === "allow-once" || answer.decision === "allow-always") return { allow: true };
    const said = answer.message?.trim() ? ` They said: ${answer.message.trim()}` : "";
    return { allow: false, reason: `The user denied this ${req.tool} call.${said}` };
  }
  return self;
}
