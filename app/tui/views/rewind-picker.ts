import type { Theme } from "../../../themes/index.js";
import { paint } from "../style.js";
import { fit, sanitize, textWidth, truncate, wrap } from "../text.js";
import { shownPath } from "../rewind-state.js";
import { ago } from "./lists.js";

/** One earlier prompt the session can go back to (a `list-checkpoints` checkpoint). */
export interface RewindPoint {
  /** 1-based prompt number in the session's conversation. */
  index: number;
  text: string;
  ts: number;
  /** Files that prompt's turn wrote or edited through Keen's tools. */
  files: string[];
}

/** What a rewind takes back: the conversation, the files, or both. */
export type RewindMode = "conversation" | "files" | "both";

/** The rewind picker: the prompts newest first; once one is chosen, what to rewind. */
export interface RewindPickerUi {
  points: RewindPoint[];
  selected: number;
  /** Set once a prompt is chosen (Enter): the modes offered and the one selected. */
  step?: { modes: RewindMode[]; selected: number };
}

const MODE_HELP: Record<RewindMode, string> = {
  conversation: "the model forgets this prompt and everything after it; files stay as they are",
  files: "the files go back to how they were before this prompt; the conversation stays",
  both: "conversation and files",
};

/** The picker for checkpoints in prompt order (as `list-checkpoints` answers): newest first, the newest selected. */
export function createRewindPicker(checkpoints: RewindPoint[]): RewindPickerUi {
  return { points: [...checkpoints].sort((a, b) => b.index - a.index), selected: 0 };
}

/** The files that prompt `index`'s turn and every later one changed: what a files rewind to it puts back. */
export function filesFrom(points: RewindPoint[], index: number): string[] {
  return [...new Set(points.filter((p) => p.index >= index).flatMap((p) => p.files))];
}

/** The modes offered for a prompt: files only when that turn or a later one changed files. */
export function rewindModes(points: RewindPoint[], index: number): RewindMode[] {
  return filesFrom(points, index).length ? ["conversation", "files", "both"] : ["conversation"];
}

function fileCount(n: number): string {
  return n === 0 ? "" : n === 1 ? "1 file" : `${n} files`;
}

/** The picker as a title and at most `height` lines of `width` cells; the selection stays in view. */
export function rewindPickerLines(ui: RewindPickerUi, width: number, height: number, theme: Theme, now: number, cwd: string): { title: string; lines: string[] } {
  const point = ui.points[ui.selected];
  if (!ui.step || !point) return { title: " Rewind: go back to before a prompt ", lines: promptLines(ui, width, height, theme, now) };
  const files = filesFrom(ui.points, point.index).map((f) => sanitize(shownPath(f, cwd)));
  const head = [
    ...wrap(`Before prompt ${point.index}: ${oneLine(point.text)}`, width).slice(0, 2).map((l) => paint(theme, "accent", l)),
    ...(files.length ? wrap(`Changed by it and later turns: ${files.join(", ")}`, width).slice(0, 3).map((l) => paint(theme, "dim", l)) : [paint(theme, "dim", "No file was changed by it or later turns.")]),
    "",
  ];
  const nameWidth = Math.max(...ui.step.modes.map((m) => m.length)) + 2;
  const rows = ui.step.modes.map((mode, i) => {
    const text = fit(`${mode.padEnd(nameWidth)}${truncate(MODE_HELP[mode], Math.max(0, width - nameWidth))}`, width);
    return i === ui.step!.selected ? paint(theme, "selection", text) : text;
  });
  const footer = ["", paint(theme, "dim", truncate("Enter rewinds · Esc back to the prompts", width))];
  return { title: " Rewind: what to take back ", lines: [...head, ...rows, ...footer].slice(0, Math.max(1, height)) };
}

function promptLines(ui: RewindPickerUi, width: number, height: number, theme: Theme, now: number): string[] {
  const footer = paint(theme, "dim", truncate("Enter chooses · Esc cancels", width));
  const room = Math.max(1, height - 2);
  const start = Math.max(0, Math.min(ui.selected - Math.floor(room / 2), ui.points.length - room));
  const numberWidth = String(ui.points[0]?.index ?? 1).length;
  const rows = ui.points.slice(start, start + room).map((p, k) => {
    const detail = [ago(p.ts, now), fileCount(p.files.length)].filter(Boolean).join(" · ");
    const label = `${String(p.index).padStart(numberWidth)}  `;
    const textRoom = Math.max(1, width - textWidth(label) - textWidth(detail) - 2);
    const text = fit(truncate(oneLine(p.text), textRoom), textRoom);
    const line = `${label}${text}  ${detail}`;
    return start + k === ui.selected ? paint(theme, "selection", fit(line, width)) : `${label}${text}  ${paint(theme, "dim", detail)}`;
  });
  return [...rows, "", footer];
}

/** A prompt on one line: its lines joined, control characters gone. */
function oneLine(text: string): string {
  return sanitize(text).replace(/\s+/g, " ").trim();
}
