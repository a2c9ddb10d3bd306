import type { Theme } from "../../../themes/index.js";
import type { DiffEntry } from "../state.js";
import { paint } from "../style.js";
import { sanitize, textWidth, wrapLine } from "../text.js";

/** A unified diff as coloured lines: additions, deletions, hunk headers and file headers each in their token. */
export function diffLines(diff: string, width: number, theme: Theme): string[] {
  return sanitize(diff)
    .replace(/\n$/, "")
    .split("\n")
    .flatMap((line) => {
      const token = line.startsWith("+++") || line.startsWith("---") || line.startsWith("Index:") || line.startsWith("====")
        ? "diffMeta"
        : line.startsWith("+") ? "diffAdd" : line.startsWith("-") ? "diffDel" : line.startsWith("@@") ? "diffHunk" : "text";
      // A rule line is cut to the pane, not wrapped onto a second line.
      if (/^={4,}$/.test(line)) return [paint(theme, token, line.slice(0, width))];
      return wrapLine(line, width, 1).map((l) => paint(theme, token, l));
    });
}

const cache = new WeakMap<DiffEntry, { stamp: string; lines: string[] }>();

/** The diff pane's content: a header naming the file and its place in the list, then the diff. */
export function diffPaneLines(diffs: DiffEntry[], index: number, width: number, theme: Theme): { header: string; body: string[] } {
  if (diffs.length === 0) return { header: paint(theme, "dim", "No changes yet."), body: [] };
  const entry = diffs[Math.min(index, diffs.length - 1)]!;
  const stateText = entry.pending ? " awaiting approval" : "";
  const counter = `${index + 1}/${diffs.length}`;
  // The place in the list and the approval state always show: a long path gives way from its start.
  const path = leftCut(sanitize(entry.path) || "(file)", width - textWidth(counter) - stateText.length - 1);
  const state = stateText ? paint(theme, "warning", stateText) : "";
  const header = `${paint(theme, "accent", path)} ${paint(theme, "dim", counter)}${state}`;
  const stamp = `${width}|${theme.name}|${theme.mono}`;
  let hit = cache.get(entry);
  if (!hit || hit.stamp !== stamp) {
    hit = { stamp, lines: diffLines(entry.diff, width, theme) };
    cache.set(entry, hit);
  }
  return { header, body: hit.lines };
}

/** `text` cut to `width` columns from its start, marked with an ellipsis. */
function leftCut(text: string, width: number): string {
  if (textWidth(text) <= width) return text;
  const chars = [...text];
  let kept = "";
  for (let i = chars.length - 1; i >= 0 && textWidth(chars[i] + kept) <= width - 1; i--) kept = chars[i] + kept;
  return `…${kept}`;
}
