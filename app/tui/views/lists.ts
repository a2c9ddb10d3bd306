import type { Theme } from "../../../themes/index.js";
import { helpBindings } from "../keymap.js";
import { SLASH_COMMANDS, customOnly, type SlashCommand } from "../slash.js";
import { paint } from "../style.js";
import { fit, sanitize, textWidth, truncate, truncateStart } from "../text.js";

/** How long ago a time was, in the largest whole unit: "5s ago", "3m ago", "2h ago", "4d ago" ("" without a time). */
export function ago(ts: number | undefined, now: number): string {
  if (!ts) return "";
  const s = Math.max(0, Math.round((now - ts) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

/** One row of a picker or completion list. */
export interface ListItem {
  label: string;
  detail?: string;
  /** The label is a path: cut at its start when wider than the row, so the file name (what tells paths apart) shows. */
  path?: boolean;
}

/** A list with one selected row, scrolled so the selection is always in view. */
export function listLines(items: ListItem[], selected: number, width: number, height: number, theme: Theme): string[] {
  if (items.length === 0) return [paint(theme, "dim", "nothing to show")];
  const start = Math.max(0, Math.min(selected - Math.floor(height / 2), items.length - height));
  return items.slice(start, start + height).map((item, k) => {
    const i = start + k;
    const label = item.path ? truncateStart(sanitize(item.label), width) : sanitize(item.label);
    const detail = item.detail ? `  ${sanitize(item.detail)}` : "";
    const room = Math.max(0, width - textWidth(label) - 1);
    if (i === selected) return paint(theme, "selection", fit(`${label}${truncate(detail, room)}`, width));
    return fit(`${label}${paint(theme, "dim", truncate(detail, room))}`, width);
  });
}

/** The help screen: every key from the keymap table and every slash command. */
export function helpLines(width: number, theme: Theme, custom: SlashCommand[] = []): string[] {
  const bindings = helpBindings();
  const keyWidth = Math.min(18, Math.max(...bindings.map((b) => b.label.length)) + 2);
  const lines = [paint(theme, "heading", "Keys")];
  for (const b of bindings) lines.push(truncate(`${paint(theme, "accent", b.label.padEnd(keyWidth))}${b.help}`, width));
  lines.push("", paint(theme, "heading", "Commands"));
  for (const c of SLASH_COMMANDS) {
    const name = `/${c.name}${c.args ? ` ${c.args}` : ""}`;
    lines.push(truncate(`${paint(theme, "accent", name)}  ${c.help}`, width));
  }
  lines.push(truncate(`${paint(theme, "accent", "!command")}  run your own shell command (no approval; the sandbox applies); its output goes to the model with your next prompt`, width));
  const own = customOnly(custom);
  if (own.length) {
    lines.push("", paint(theme, "heading", "Custom commands (.keen/commands, .claude/commands, your config's commands)"));
    for (const c of own) {
      const name = `/${c.name}${c.args ? ` ${c.args}` : ""}`;
      lines.push(truncate(`${paint(theme, "accent", sanitize(name))}  ${sanitize(c.help)}`, width));
    }
  }
  lines.push("", paint(theme, "dim", "@ completes a workspace path. Esc closes this help."));
  return lines;
}
