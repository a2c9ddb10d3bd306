import { parsePatch } from "diff";
import type { Theme } from "../../../themes/index.js";
import type { DiffEntry } from "../state.js";
import { paint } from "../style.js";
import { sanitize, textWidth, truncateStart, wrapLine } from "../text.js";

/** A diff as drawn: its lines, where its first change is, and how many lines it adds and removes. */
export interface DiffView {
  lines: string[];
  /** Index in `lines` of the first added or removed line (0 when there is none). */
  firstChange: number;
  added: number;
  removed: number;
}

/**
 * A unified diff drawn compactly: no `Index:`/`===`/`---`/`+++` header, each
 * line with its line number (the old one for a removal, the new one
 * otherwise) and a `+`/`-` mark in the diff colours, hunks parted by a `⋯`
 * line. The diff library parses the patch; text that is not a unified diff is
 * shown as it is, coloured by its first character, and a patch without hunks
 * says there is no change.
 */
export function diffView(diff: string, width: number, theme: Theme): DiffView {
  const text = sanitize(diff);
  let patches: ReturnType<typeof parsePatch>;
  try {
    patches = parsePatch(text);
  } catch {
    patches = [];
  }
  const hunks = patches.flatMap((p) => p.hunks);
  // File headers and no hunk: a write of the text the file already held (createPatch of equal texts).
  if (hunks.length === 0 && patches.some((p) => p.oldFileName || p.newFileName)) {
    return { lines: wrapLine(paint(theme, "dim", "no change: the file held this text"), width), firstChange: 0, added: 0, removed: 0 };
  }
  if (hunks.length === 0) return rawView(text, width, theme);
  const last = hunks.at(-1)!;
  const digits = String(Math.max(last.oldStart + last.oldLines, last.newStart + last.newLines)).length;
  const out: DiffView = { lines: [], firstChange: -1, added: 0, removed: 0 };
  hunks.forEach((hunk, h) => {
    if (h > 0) out.lines.push(paint(theme, "diffHunk", `${" ".repeat(digits)} ⋯`));
    let oldNo = hunk.oldStart;
    let newNo = hunk.newStart;
    for (const line of hunk.lines) {
      const mark = line[0];
      if (mark === "\\") continue; // "\ No newline at end of file"
      const body = line.slice(1);
      const token = mark === "+" ? "diffAdd" : mark === "-" ? "diffDel" : "text";
      const no = mark === "-" ? oldNo++ : newNo++;
      if (mark === " ") oldNo++;
      if (mark !== " " && out.firstChange < 0) out.firstChange = out.lines.length;
      if (mark === "+") out.added++;
      if (mark === "-") out.removed++;
      const gutter = paint(theme, mark === " " ? "dim" : token, `${String(no).padStart(digits)} ${mark === " " ? " " : mark} `);
      const rows = wrapLine(body, Math.max(1, width - digits - 3)).map((l) => paint(theme, token, l));
      out.lines.push(gutter + (rows[0] ?? ""), ...rows.slice(1).map((l) => " ".repeat(digits + 3) + l));
    }
  });
  out.firstChange = Math.max(0, out.firstChange);
  return out;
}

function rawView(text: string, width: number, theme: Theme): DiffView {
  const lines = text.replace(/\n$/, "").split("\n").filter((l) => l !== "").flatMap((line) => {
    const token = line.startsWith("+") ? "diffAdd" : line.startsWith("-") ? "diffDel" : line.startsWith("@@") ? "diffHunk" : "text";
    return wrapLine(line, width, 1).map((l) => paint(theme, token, l));
  });
  return { lines, firstChange: 0, added: 0, removed: 0 };
}

/** The compact diff's lines (see `diffView`). */
export function diffLines(diff: string, width: number, theme: Theme): string[] {
  return diffView(diff, width, theme).lines;
}

/** Where the diff pane starts a newly shown diff: on the first change, one line of context above it. */
export const DIFF_AT_FIRST_CHANGE = -1;

const cache = new WeakMap<DiffEntry, { stamp: string; view: DiffView }>();

/** The diff pane's content: a header naming the file, its place in the list and the size of the change, then the diff. */
export function diffPaneLines(diffs: DiffEntry[], index: number, width: number, theme: Theme): { header: string; body: string[]; firstChange: number } {
  if (diffs.length === 0) return { header: paint(theme, "dim", "No changes yet."), body: [], firstChange: 0 };
  const entry = diffs[Math.min(index, diffs.length - 1)]!;
  const stamp = `${width}|${theme.name}|${theme.mono}`;
  let hit = cache.get(entry);
  if (!hit || hit.stamp !== stamp) {
    hit = { stamp, view: entry.reverted ? revertedView(diffView(entry.diff, width, theme), theme) : diffView(entry.diff, width, theme) };
    cache.set(entry, hit);
  }
  const { lines, firstChange, added, removed } = hit.view;
  const stateText = entry.pending ? " awaiting approval" : entry.reverted ? " reverted" : "";
  const counter = `${index + 1}/${diffs.length}`;
  const size = added || removed ? ` +${added} -${removed}` : "";
  // The place in the list and the approval state always show: a long path gives way from its start.
  const path = truncateStart(sanitize(entry.path) || "(file)", width - textWidth(counter) - stateText.length - size.length - 1);
  const state = stateText ? paint(theme, entry.reverted ? "dim" : "warning", stateText) : "";
  const header = `${paint(theme, "accent", path)} ${paint(theme, "dim", counter)}${size ? `${paint(theme, "diffAdd", ` +${added}`)}${paint(theme, "diffDel", ` -${removed}`)}` : ""}${state}`;
  return { header, body: lines, firstChange };
}

/** A change an undo or a rewind took back: drawn dim, without the diff colours, so it never reads as what the file holds. */
export function revertedView(view: DiffView, theme: Theme): DiffView {
  return { ...view, lines: view.lines.map((l) => paint(theme, "dim", l.replace(/\x1b\[[0-9;]*m/g, ""))) };
}
