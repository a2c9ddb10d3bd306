import type { PlanEntry } from "../../../protocol/events.js";
import type { Theme } from "../../../themes/index.js";
import { paint } from "../style.js";
import { sanitize, wrapLine } from "../text.js";

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
