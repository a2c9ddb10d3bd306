import { PERMISSION_MODES, type PermissionMode } from "../../protocol/modes.js";

/** How a tool call is treated before it runs. */
export type Gate = "allow" | "ask" | "refuse";

/** What a tool does, for the permission policy: reads never ask. */
export type ToolClass = "read" | "edit" | "exec";

// Tools that only read the workspace; everything else (bash, MCP tools without readOnlyHint) counts as exec.
export const READ_TOOLS: ReadonlySet<string> = new Set(["read_file", "grep", "glob", "list", "structured_output"]);
export const EDIT_TOOLS: ReadonlySet<string> = new Set(["write_file", "edit_file"]);

/** The class of a tool by name; unknown tools are treated as the riskiest. */
export function toolClass(name: string): ToolClass {
  if (READ_TOOLS.has(name)) return "read";
  if (EDIT_TOOLS.has(name)) return "edit";
  return "exec";
}


/**
 * The decision table. `auto`: everything runs (the file guard still refuses
 * what it refuses). `accept-edits`: edits and writes run, bash asks (runs when it is sandboxed: `bashConfined`). `ask`:
 * reads run, edits, writes and bash ask. `read-only`: edits, writes and bash
 * are refused without asking. A standing rule from `allow-always` /
 * `deny-always` replaces asking; `read-only` is never widened by a rule.
 */
export function gate(mode: PermissionMode, tool: string, rule?: "allow" | "deny", opts: GateOptions = {}): Gate {
  // A tool that says what it is (an MCP tool's readOnlyHint) is taken at its word; the others by name.
  const cls = opts.kind ?? toolClass(tool);
  if (cls === "read") return "allow";
  if (rule === "deny") return "refuse";
  if (mode === "read-only") return "refuse";
  if (rule === "allow" || mode === "auto") return "allow";
  if (mode === "accept-edits" && (cls === "edit" || (tool === "bash" && opts.bashConfined))) return "allow";
  return "ask";
}

/** What else `gate` weighs. */
export interface GateOptions {
  /** The tool's own class (MCP tools: "read" with readOnlyHint); absent: by name. */
  kind?: ToolClass;
  /** bash runs in the sandbox, its writes confined like the file tools' (and config lets accept-edits run it). */
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

/** The stricter of two modes; an absent one does not count. */
export function stricterMode(a: PermissionMode | undefined, b: PermissionMode | undefined): PermissionMode | undefined {
  if (!a || !b) return a ?? b;
  return PERMISSION_MODES.indexOf(a) >= PERMISSION_MODES.indexOf(b) ? a : b;
}

