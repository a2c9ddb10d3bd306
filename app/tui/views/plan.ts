import type { PlanEntry } from "../../../protocol/events.js";
import type { Theme } from "../../../themes/index.js";
import { paint } from "../style.js";
import { sanitize, truncate, wrapLine } from "../text.js";

const MARKS: Record<PlanEntry["status"], string> = { pending: "[ ]", in_progress: "[~]", completed: "[x]" };

/**
 * The model's plan as a compact checklist: `[ ]` pending, `[~]` in progress, `[x]` done, the
 * item in progress highlighted and done items dimmed, long items wrapped under their text.
 * Drawn in the transcript each time the plan changes (a `plan-update`), live or replayed.
 */
export function planLines(entries: PlanEntry[], theme: Theme, width: number): string[] {
  const done = entries.filter((e) => e.status === "completed").length;
  const head = paint(theme, "tool", entries.length ? `Plan · ${done}/${entries.length} done` : "Plan cleared");
  return [head, ...entries.flatMap((entry) => {
    const token = entry.status === "completed" ? "dim" : entry.status === "in_progress" ? "accent" : "text";
    return wrapLine(`  ${MARKS[entry.status]} ${sanitize(entry.content).replace(/\s+/g, " ")}`, width, 6).map((l) => paint(theme, token, l));
  })];
}

/**
 * The plan panel's lines for `height` rows: every item when they fit; otherwise completed
 * items leave from the top first (the one in progress stays in view), and the last row
 * counts what is left out.
 */
export function planPaneLines(entries: PlanEntry[], theme: Theme, width: number, height: number): string[] {
  if (height <= 0) return [];
  const row = (entry: PlanEntry) => {
    const token = entry.status === "completed" ? "dim" : entry.status === "in_progress" ? "accent" : "text";
    return paint(theme, token, truncate(`${MARKS[entry.status]} ${sanitize(entry.content).replace(/\s+/g, " ")}`, Math.max(1, width)));
  };
  if (entries.length <= height) return entries.map(row);
  let shown = entries;
  let hiddenDone = 0;
  while (shown.length > height && shown[0]?.status === "completed") {
    shown = shown.slice(1);
    hiddenDone++;
  }
  const lines: string[] = [];
  if (hiddenDone && height > 1) lines.push(paint(theme, "dim", `… ${hiddenDone} done`));
  const room = height - lines.length;
  if (shown.length <= room) return [...lines, ...shown.map(row)];
  return [...lines, ...shown.slice(0, room - 1).map(row), paint(theme, "dim", `… ${shown.length - room + 1} more`)];
}

/** The plan panel's label: how far along the plan is. */
export function planLabel(entries: PlanEntry[]): string {
  const done = entries.filter((e) => e.status === "completed").length;
  return ` Plan ${done}/${entries.length} `;
}
