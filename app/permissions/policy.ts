import { PERMISSION_MODES, type PermissionMode } from "../../protocol/modes.js";
import type { ToolKind } from "../../protocol/events.js";

/** How a tool call is treated before it runs. */
export type Gate = "allow" | "ask" | "refuse";

/**
 * The decision table. `auto`: everything runs (the file guard still refuses
 * what it refuses). `accept-edits`: edits and writes run, commands ask (an `exec` call that runs
 * in the sandbox runs when the sandbox confines its writes: `sandboxed` and `bashConfined`). `ask`:
 * reads run, edits, writes and bash ask. `read-only`: edits, writes and bash
 * are refused without asking. A standing rule from `allow-always` /
 * `deny-always` replaces asking; `read-only` is never widened by a rule.
 */
export function gate(mode: PermissionMode, rule?: "allow" | "deny", opts: GateOptions = {}): Gate {
  // The tool says what it is (Tool.kind, an MCP tool's readOnlyHint); a tool that says nothing is the riskiest.
  const cls = opts.kind ?? "other";
  if (opts.mutates === false || (opts.mutates === undefined && (cls === "read" || cls === "search"))) return "allow";
  if (rule === "deny") return "refuse";
  if (mode === "read-only") return "refuse";
  if (rule === "allow" || mode === "auto") return "allow";
  if (mode === "accept-edits" && (cls === "edit" || (cls === "exec" && opts.sandboxed && opts.bashConfined))) return "allow";
  return "ask";
}

/** What else `gate` weighs. */
export interface GateOptions {
  /** The tool's own kind (Tool.kind; MCP tools: "read" with readOnlyHint); absent: "other". */
  kind?: ToolKind;
  /** The tool's own word on whether it changes anything (Tool.mutates); absent: by kind. */
  mutates?: boolean;
  /** The call runs inside the command sandbox (Tool.sandboxed: bash when the sandbox is on). */
  sandboxed?: boolean;
  /** The sandbox confines commands' writes like the file tools' and config lets accept-edits run them (the session's setup). */
  bashConfined?: boolean;
}

/**
 * A sandboxed command wants a host outside the allowlist. Only the modes that ask a
 * person ask about it (ask, accept-edits); `auto` does not widen the allowlist (the
 * sandbox is the point), and `read-only` refuses, as everywhere.
 */
export function networkGate(mode: PermissionMode, rule?: "allow" | "deny"): Gate {
  if (rule === "deny" || mode === "read-only") return "refuse";
  if (rule === "allow") return "allow";
  return mode === "auto" ? "refuse" : "ask";
}

/**
 * A network tool's own request (web_fetch) to a host its config lists do not allow: ask and
 * accept-edits ask, `auto` fetches (no sandbox is in the way: the tool itself is the
 * boundary, and it still refuses private addresses and denied hosts), `read-only` refuses.
 */
export function webGate(mode: PermissionMode, rule?: "allow" | "deny"): Gate {
  if (rule === "deny" || mode === "read-only") return "refuse";
  if (rule === "allow" || mode === "auto") return "allow";
  return "ask";
}

/** The stricter of two modes; an absent one does not count. */
export function stricterMode(a: PermissionMode | undefined, b: PermissionMode | undefined): PermissionMode | undefined {
  if (!a || !b) return a ?? b;
  return PERMISSION_MODES.indexOf(a) >= PERMISSION_MODES.indexOf(b) ? a : b;
}

