/*
 * The permission modes: the one place they are written. Plain constants, no
 * zod, so the CLI's flag parser and the TUI (whose bundles stay free of zod)
 * can import them; protocol/commands.ts builds the schema from this list.
 * test/architecture.test.ts refuses the list written out anywhere else.
 */

/**
 * The modes, ordered from the widest (most trusting) to the narrowest: the
 * one order every comparison uses (a project config, or the mode `keen stdio`
 * was started with, only lets a mode move right). What each mode lets run is
 * app/permissions/policy.ts's `gate`; docs/PROTOCOL.md's table is generated
 * from it.
 */
export const PERMISSION_MODES = ["auto", "accept-edits", "ask", "read-only"] as const;
/** One of PERMISSION_MODES. */
export type PermissionMode = (typeof PERMISSION_MODES)[number];

/**
 * How front ends offer the modes, in the order they list and cycle them: the
 * default (`ask`) first, then wider, then `read-only`. ACP sends these as its
 * session modes; the TUI's Shift-Tab and `/mode` walk them. The type holds
 * every mode to exactly one entry.
 */
export const PERMISSION_MODE_LABELS: Readonly<Record<PermissionMode, { name: string; description: string }>> = {
  ask: { name: "Ask", description: "Reads run; edits and commands ask first." },
  "accept-edits": { name: "Accept edits", description: "Reads and edits run; commands ask first." },
  auto: { name: "Auto", description: "Everything runs without asking." },
  "read-only": { name: "Read-only", description: "Reads run; edits and commands are refused." },
};

/** The modes in the order front ends list and cycle them (PERMISSION_MODE_LABELS's order). */
export const MODE_CYCLE = Object.keys(PERMISSION_MODE_LABELS) as PermissionMode[];

/** True when `text` names a mode (for flags and typed `/mode` arguments). */
export function isPermissionMode(text: string): text is PermissionMode {
  return (PERMISSION_MODES as readonly string[]).includes(text);
}

/** True when mode `a` lets more run than `b`. */
export function isWiderMode(a: PermissionMode, b: PermissionMode): boolean {
  return PERMISSION_MODES.indexOf(a) < PERMISSION_MODES.indexOf(b);
}
