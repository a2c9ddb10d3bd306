import type { CallView, ToolKind } from "../../protocol/events.js";

/** What a tool call asks permission for; `summary` is a one-line description for a human. */
export interface PermissionRequest {
  tool: string;
  /** The tool's kind (Tool.kind), which the gate decides by; absent: "other", asked about. */
  kind?: ToolKind;
  /** The tool's own word on whether the call changes anything (Tool.mutates); absent: by kind. */
  mutates?: boolean;
  /** The call runs inside the command sandbox (Tool.sandboxed). */
  sandboxed?: boolean;
  /** How the call reads for a person: the permission-request event carries it. Labels only; the gate goes by `kind`. */
  view?: CallView;
  input: unknown;
  summary: string;
  /** The model's id for the call (permission-request events carry it). */
  callId?: string;
  /** A subagent's call: the id of the `task` call whose child makes it (its permission-request event carries it). */
  parentCallId?: string;
  /** For writes and edits: the change the call would make, for the person deciding. */
  preview?: ChangePreview;
  /**
   * A connection to a host outside the allowlist: a sandboxed command's (`tool` is `network:<host>[:<port>]`),
   * or with `kind: "network"` a network tool's own fetch (`web:<host>[:<port>]`, web_fetch).
   */
  network?: boolean;
  /**
   * A PreToolUse hook's say (app/extensions/hook-points.ts): `allow` skips asking, `ask` asks even
   * where the mode would allow; neither overrides a refusal (read-only mode, a deny-always rule).
   */
  hook?: "allow" | "ask";
  /** How the call reads with another input (a hook rewrote it): its view, summary and preview anew. */
  describe?(input: unknown): Promise<Pick<PermissionRequest, "view" | "summary" | "preview">>;
}

/**
 * What a write or edit would change: the unified diff, plus the whole old text (null: a new
 * file) and new text when they are small enough to send (ACP clients diff those themselves).
 */
export interface ChangePreview {
  path: string;
  diff: string;
  old_text?: string | null;
  new_text?: string;
}

/** The answer: run it (with `input` instead of the call's when a hook rewrote it), or refuse with a reason written for the model. */
export type PermissionDecision = { allow: true; input?: unknown } | { allow: false; reason: string };

/**
 * Decides whether a tool call may run. Contract: never throws; async because an
 * interactive implementation answers through an event and a reply command.
 */
export interface PermissionRequester {
  request(req: PermissionRequest, signal?: AbortSignal): Promise<PermissionDecision>;
  /** True when the decision needs the call's preview (a person may look at a diff). */
  wantsPreview?(req: Pick<PermissionRequest, "tool" | "kind" | "mutates" | "sandboxed">): boolean;
  /** After an allowed call ran: its result, as hooks (PostToolUse) leave it for the model. Contract: never throws. */
  afterTool?<R extends { content: string; is_error: boolean }>(call: { tool: string; callId: string; input: unknown }, result: R, signal?: AbortSignal): Promise<R>;
}
