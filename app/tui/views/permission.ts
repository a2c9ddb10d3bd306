import type { Theme } from "../../../themes/index.js";
import type { Editor } from "../editor.js";
import type { PendingPermission } from "../state.js";
import { paint } from "../style.js";
import { sanitize, wrap, wrapLine } from "../text.js";
import { diffLines } from "./diff-pane.js";
import { inputLines } from "./input-box.js";
import { bashRisks } from "./risk.js";

/** The permission modal's own state: how far its body is scrolled; the denial message being typed. */
export interface PermissionUi {
  scroll: number;
  denying?: Editor;
}

/** Keys the modal answers to (shown in its footer; the app dispatches on the same letters). */
export const PERMISSION_KEYS = { allowOnce: "y", allowAlways: "a", deny: "n", denyWithMessage: "m" } as const;

function inputOf(req: PendingPermission): Record<string, unknown> {
  try {
    const v = JSON.parse(req.input) as unknown;
    return v && typeof v === "object" ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A bash command with its risky parts in the `risky` token, and the reasons. */
export function highlightCommand(command: string, cwd: string, theme: Theme): { text: string; reasons: string[] } {
  const safe = sanitize(command);
  const spans = bashRisks(safe, cwd);
  let text = "";
  let at = 0;
  for (const s of spans) {
    text += safe.slice(at, s.start) + paint(theme, "risky", safe.slice(s.start, s.end));
    at = s.end;
  }
  return { text: text + safe.slice(at), reasons: spans.map((s) => s.reason) };
}

/** The modal for one permission request as a title and exactly `height` lines (or fewer) of `width` cells. */
export function permissionModal(req: PendingPermission, ui: PermissionUi, width: number, height: number, theme: Theme, cwd: string, waiting: number): { title: string; lines: string[] } {
  const input = inputOf(req);
  const tool = sanitize(req.tool_name);
  const head: string[] = [];
  let body: string[];
  if (req.tool_kind === "exec" && typeof input.command === "string") {
    const { text, reasons } = highlightCommand(input.command, cwd, theme);
    head.push(paint(theme, "accent", "Run this command?"));
    body = text.split("\n").flatMap((l, i) => wrapLine((i === 0 ? "$ " : "  ") + l, width, 2));
    if (reasons.length) body.push("", ...wrap(`Look twice: ${[...new Set(reasons)].join("; ")}.`, width).map((l) => paint(theme, "warning", l)));
  } else if (req.tool_name.startsWith("network:")) {
    head.push(paint(theme, "accent", `Let the sandboxed command connect to ${sanitize(req.tool_name.slice("network:".length))}?`));
    body = wrap("The host is not in sandbox.network.allowedDomains of your Keen config. Always: for the rest of this session.", width);
  } else if (req.tool_name.startsWith("web:")) {
    head.push(paint(theme, "accent", `Let web_fetch fetch from ${sanitize(req.tool_name.slice("web:".length))}?`));
    body = wrap(`${sanitize(String(input.url ?? ""))}\n\nThe host is not in web.allowedDomains of your Keen config. Always: this host for the rest of this session.`, width);
  } else if (req.diff) {
    head.push(paint(theme, "accent", `${sanitize(req.title ?? `Change ${req.path ?? String(input.path ?? "")}`)}?`));
    body = diffLines(req.diff, width, theme);
  } else {
    head.push(paint(theme, "accent", `Allow ${tool}?`));
    body = wrap(sanitize(JSON.stringify(input, null, 2)), width);
  }
  const k = PERMISSION_KEYS;
  const footerText: string[] = [""];
  if (ui.denying) {
    footerText.push(paint(theme, "dim", "Message to the model (Enter denies with it, Esc goes back):"), ...inputLines(ui.denying, width, theme, true, ""));
  } else {
    const [once, always, deny, message] = width >= 64 ? ["allow once", `allow ${tool} always`, "deny", "deny with a message"] : ["once", "always", "deny", "message"];
    footerText.push(`${paint(theme, "success", k.allowOnce)} ${once}  ${paint(theme, "success", k.allowAlways)} ${always}  ${paint(theme, "error", k.deny)} ${deny}  ${paint(theme, "error", k.denyWithMessage)} ${message}`);
    if (waiting > 1) footerText.push(paint(theme, "dim", `${waiting - 1} more request(s) waiting`));
  }
  // The footer (the keys) is never cut: the body gives way first.
  const footer = footerText.flatMap((l) => wrapLine(l, width));
  if (height < head.length + footer.length + 2) footer.shift();
  const room = Math.max(1, height - head.length - footer.length);
  const scroll = Math.max(0, Math.min(ui.scroll, Math.max(0, body.length - room)));
  let shown = body.slice(scroll, scroll + room);
  // One row is too few for a line of the body and the counter: the line is shown (Up/Down scroll it).
  if (body.length > room && room > 1) {
    const below = body.length - scroll - room;
    shown = shown.slice(0, room - 1);
    shown.push(paint(theme, "dim", `lines ${scroll + 1}-${scroll + room - 1} of ${body.length}${below > 0 ? ", PgDn for more" : ""}`));
  }
  return { title: ` Permission: ${tool} `, lines: [...head.flatMap((l) => wrapLine(l, width)), ...shown, ...footer] };
}
