import type { Theme } from "../../themes/index.js";
import type { Editor } from "./editor.js";
import { ALL_PANES, layout, maxInputLines, type PaneChoice, type Rect } from "./layout.js";
import type { SessionView } from "./state.js";
import type { SlashCommand } from "./slash.js";
import { paint } from "./style.js";
import { fit, truncate, wrap } from "./text.js";
import { DIFF_AT_FIRST_CHANGE, diffPaneLines } from "./views/diff-pane.js";
import { promptView } from "./views/input-box.js";
import { jobLines, jobOrder, selectedJob } from "./views/jobs.js";
import { helpLines, listLines, type ListItem } from "./views/lists.js";
import { planLabel, planPaneLines } from "./views/plan.js";
import { permissionModal, type PermissionUi } from "./views/permission.js";
import { rewindPickerLines, type RewindPickerUi } from "./views/rewind-picker.js";
import { statusBar } from "./views/status-bar.js";
import { toolPanelWindow, type ToolPanelUi } from "./views/tool-panel.js";
import { transcriptWindow, type TranscriptCache } from "./views/transcript.js";
import { FOLLOW, type Scroll } from "./views/window.js";

/** Panes that can hold the focus, in Tab order. */
export type Pane = "transcript" | "tools" | "diff" | "input";

/** A pop-up over the panes: help, a picker, or the step-limit question. */
export type Overlay =
  | { kind: "help"; scroll: number }
  /** `/jobs`: the background jobs (views/jobs.ts); `selected`: the job `k` kills (jobs-actions.ts). */
  | { kind: "jobs"; selected?: string }
  | { kind: "picker"; title: string; items: ListItem[]; values: string[]; selected: number; pick: (value: string) => void }
  | { kind: "continue" }
  | { kind: "rewind"; picker: RewindPickerUi };

/** The completion list under the cursor word (`/command`, `@path`). */
export interface Completion {
  items: ListItem[];
  values: string[];
  selected: number;
  start: number;
}

/** Everything the TUI shows that does not come from events. */
export interface UiState {
  theme: Theme;
  focus: Pane;
  transcriptScroll: Scroll;
  tools: ToolPanelUi;
  diffIndex: number;
  diffScroll: number;
  /** Jump to each new diff until the user picks one. */
  diffFollow: boolean;
  thinkingExpanded: boolean;
  /** Tool output and diffs shown whole in the transcript (Ctrl-O), not folded. */
  outputExpanded?: boolean;
  overlay?: Overlay;
  permission: PermissionUi;
  completion?: Completion;
  note?: { text: string; until: number };
  hint: string;
  /** `/undo` showed what it would restore: the next `/undo` confirms it. */
  undoArmed?: boolean;
  /** Until when a second Esc on the empty prompt opens the rewind picker (rewind-actions.ts). */
  escArmedUntil?: number;
  /**
   * Prompts typed while a turn runs, oldest first. The TUI holds them (not the engine) so each
   * can still be edited or removed; the next is sent when a turn ends, and only then enters the transcript.
   */
  queue: string[];
  /** The side panes shown (Alt-T, Alt-D, Alt-Z); remembered across runs (ui-prefs.ts). */
  panes: PaneChoice;
  /** The workspace's custom commands, as the engine last listed them (`list-commands`). */
  customCommands: SlashCommand[];
}

export function createUi(theme: Theme): UiState {
  return {
    theme, focus: "input", transcriptScroll: { ...FOLLOW }, tools: { expanded: new Set(), scroll: { ...FOLLOW } },
    diffIndex: 0, diffScroll: 0, diffFollow: true, thinkingExpanded: false, permission: { scroll: 0 },
    hint: "Type a prompt; ? for keys, / for commands, @ for files", queue: [], panes: { ...ALL_PANES }, customCommands: [],
  };
}

/** One pane as drawn: where, its lines (fitted to the inner width), its label and whether it has the focus. */
export interface PaneFrame {
  rect: Rect;
  lines: string[];
  label?: string;
  border: boolean;
  focused: boolean;
}

/** A whole screen, ready for the blessed glue to assign. */
export interface Frame {
  transcript: PaneFrame;
  tools?: PaneFrame;
  diff?: PaneFrame;
  plan?: PaneFrame;
  input: PaneFrame;
  /** The queued prompts, under the input. */
  queue?: PaneFrame;
  status: PaneFrame;
  popup?: PaneFrame;
  overlay?: PaneFrame;
  /** Scroll positions as drawn (normalised); the controller keeps them. */
  scrolls: { transcript: Scroll; tools: Scroll; diff: number };
}

const inner = (r: Rect, border: boolean) => ({ width: Math.max(1, r.width - (border ? 2 : 0)), height: Math.max(0, r.height - (border ? 2 : 0)) });
const fitAll = (lines: string[], width: number) => lines.map((l) => fit(l, width));

/** Composes the screen for a size. Pure: the same state, size and time give the same frame. */
export function composeFrame(view: SessionView, ui: UiState, editor: Editor, cache: TranscriptCache, cols: number, rows: number, now: number): Frame {
  const theme = ui.theme;
  const inputWidth = Math.max(1, cols - 2);
  const { lines: prompt, cursorRow } = promptView(editor, inputWidth, theme, ui.focus === "input" && !ui.overlay && view.permissions.length === 0, ui.hint);
  const lay = layout(cols, rows, prompt.length, ui.queue.length, ui.panes, view.plan?.length ?? 0);
  const focusable = new Set<Pane>(["transcript", "input", ...(lay.tools ? (["tools"] as Pane[]) : []), ...(lay.diff ? (["diff"] as Pane[]) : [])]);
  const focus = focusable.has(ui.focus) ? ui.focus : "input";

  const t = inner(lay.transcript, !lay.bare);
  const ctx = { theme, width: t.width, now, thinkingExpanded: ui.thinkingExpanded, outputExpanded: ui.outputExpanded };
  const win = transcriptWindow(view, ctx, cache, ui.transcriptScroll, t.height);
  const scrolled = !win.scroll.follow ? " scrolled: End follows " : "";
  const transcript: PaneFrame = {
    rect: lay.transcript, lines: fitAll(win.lines, t.width), border: !lay.bare, focused: focus === "transcript",
    label: lay.bare ? undefined : ` Keen${scrolled ? ` -${scrolled}` : " "}`,
  };

  let toolsPane: PaneFrame | undefined;
  let toolScroll = ui.tools.scroll;
  if (lay.tools) {
    const r = inner(lay.tools, true);
    const w = toolPanelWindow(view, ui.tools, r.width, r.height, theme, now);
    toolScroll = w.scroll;
    toolsPane = { rect: lay.tools, lines: fitAll(w.lines, r.width), border: true, focused: focus === "tools", label: ` Tools ${view.toolOrder.length || ""} ` };
  }
  let diffPane: PaneFrame | undefined;
  let diffTop = ui.diffScroll;
  if (lay.diff) {
    const r = inner(lay.diff, true);
    const { header, body, firstChange } = diffPaneLines(view.diffs, ui.diffIndex, r.width, theme);
    const room = Math.max(0, r.height - 1);
    // A new diff opens on its first change (a small pane would otherwise show only context).
    const want = ui.diffScroll === DIFF_AT_FIRST_CHANGE ? firstChange - 1 : ui.diffScroll;
    const top = (diffTop = Math.max(0, Math.min(want, body.length - room)));
    diffPane = { rect: lay.diff, lines: fitAll([truncate(header, r.width), ...body.slice(top, top + room)], r.width), border: true, focused: focus === "diff", label: " Diff " };
  }

  let planPane: PaneFrame | undefined;
  if (lay.plan && view.plan) {
    const r = inner(lay.plan, true);
    planPane = { rect: lay.plan, lines: fitAll(planPaneLines(view.plan, theme, r.width, r.height), r.width), border: true, focused: false, label: planLabel(view.plan) };
  }

  const maxLines = maxInputLines(rows);
  const firstRow = Math.max(0, Math.min(cursorRow - maxLines + 1, prompt.length - maxLines));
  const shownPrompt = prompt.slice(firstRow, firstRow + maxLines);
  const queued = ui.queue.length;
  const input: PaneFrame = {
    rect: lay.input, lines: fitAll(shownPrompt, inputWidth), border: true, focused: focus === "input",
    label: queued ? ` ${queued} queued${editor.isEmpty() ? " · Up edits the last" : ""} ` : undefined,
  };
  const queuePane: PaneFrame | undefined = lay.queue
    ? { rect: lay.queue, lines: fitAll(queueLines(ui.queue, lay.queue.height, cols, theme), cols), border: false, focused: false }
    : undefined;
  const note = ui.note && ui.note.until > now ? ui.note.text : undefined;
  const status: PaneFrame = { rect: lay.status, lines: [statusBar(view, cols, theme, now, note)], border: false, focused: false };

  const frame: Frame = { transcript, tools: toolsPane, diff: diffPane, plan: planPane, input, queue: queuePane, status, scrolls: { transcript: win.scroll, tools: toolScroll, diff: diffTop } };
  frame.popup = completionPopup(ui, lay.input, cols);
  frame.overlay = overlayPane(view, ui, cols, rows, now);
  return frame;
}

/** One line per queued prompt (its first line), the oldest first; the last line counts what does not fit. */
function queueLines(queue: string[], height: number, cols: number, theme: Theme): string[] {
  const entry = (text: string, i: number) => {
    const first = text.trim().split("\n")[0] ?? "";
    const more = text.trim().includes("\n") ? " …" : "";
    return `  ${i + 1}. queued: ${first}${more}`;
  };
  // One row for several (8 to 15 rows tall): the next prompt, cut so the count of the rest still shows,
  // rather than a count alone ("… and 5 more") that says nothing of what runs next.
  if (height <= 1 && queue.length > 1) {
    const rest = ` +${queue.length - 1} more`;
    return [paint(theme, "queued", `${truncate(entry(queue[0]!, 0), cols - rest.length)}${rest}`)];
  }
  const shown = queue.length > height ? queue.slice(0, height - 1) : queue;
  const lines = shown.map((text, i) => paint(theme, "queued", truncate(entry(text, i), cols)));
  if (shown.length < queue.length) lines.push(paint(theme, "queued", `  … and ${queue.length - shown.length} more`));
  return lines;
}

function completionPopup(ui: UiState, input: Rect, cols: number): PaneFrame | undefined {
  const c = ui.completion;
  if (!c || c.items.length === 0 || ui.overlay) return undefined;
  const height = Math.min(c.items.length, 8, Math.max(1, input.top - 1)) + 2;
  const width = Math.min(cols, 60);
  const lines = listLines(c.items, c.selected, width - 2, height - 2, ui.theme);
  return { rect: { left: 0, top: Math.max(0, input.top - height), width, height }, lines: fitAll(lines, width - 2), border: true, focused: true };
}

function centered(cols: number, rows: number, wantWidth: number, wantHeight: number): Rect {
  const width = Math.max(10, Math.min(cols, wantWidth));
  const height = Math.max(3, Math.min(rows - 1, wantHeight));
  return { left: Math.floor((cols - width) / 2), top: Math.max(0, Math.floor((rows - 1 - height) / 2)), width, height };
}

function overlayPane(view: SessionView, ui: UiState, cols: number, rows: number, now: number): PaneFrame | undefined {
  const theme = ui.theme;
  const request = view.permissions[0];
  if (request) {
    const rect = centered(cols, rows, Math.min(100, cols - 2), rows - 2);
    const { title, lines } = permissionModal(request, ui.permission, rect.width - 2, rect.height - 2, theme, view.cwd, view.permissions.length);
    const height = Math.min(rect.height, lines.length + 2);
    const r = centered(cols, rows, rect.width, height);
    return { rect: r, lines: fitAll(lines.slice(0, r.height - 2), r.width - 2), label: title, border: true, focused: true };
  }
  const o = ui.overlay;
  if (!o) return undefined;
  if (o.kind === "rewind") {
    const rect = centered(cols, rows, 100, Math.min(rows - 2, (o.picker.step ? o.picker.step.modes.length + 8 : o.picker.points.length + 2) + 2));
    const { title, lines } = rewindPickerLines(o.picker, rect.width - 2, rect.height - 2, theme, now, view.cwd);
    return { rect, lines: fitAll(lines, rect.width - 2), label: title, border: true, focused: true };
  }
  if (o.kind === "continue") {
    const text = ["The turn stopped at the step limit.", "", `${paint(theme, "success", "y")} continue (sends "continue")   ${paint(theme, "error", "n")} stop here`];
    const rect = centered(cols, rows, 56, 5 + 2);
    return { rect, lines: fitAll(text.flatMap((l) => wrap(l, rect.width - 2)), rect.width - 2), label: " Step limit ", border: true, focused: true };
  }
  if (o.kind === "help") {
    const rect = centered(cols, rows, 90, rows - 2);
    const all = helpLines(rect.width - 2, theme, ui.customCommands);
    const top = Math.max(0, Math.min(o.scroll, all.length - (rect.height - 2)));
    return { rect, lines: fitAll(all.slice(top, top + rect.height - 2), rect.width - 2), label: " Help ", border: true, focused: true };
  }
  if (o.kind === "jobs") {
    const selected = selectedJob(view.jobs, o.selected);
    const all = jobLines(view.jobs, theme, Math.min(cols, 100) - 2, now, selected);
    const rect = centered(cols, rows, 100, Math.min(rows - 2, all.length + 2));
    // The selected job stays in sight: centred when the list is longer than the box.
    const at = Math.max(0, jobOrder(view.jobs).findIndex((job) => job.job_id === selected));
    const top = Math.max(0, Math.min(at - Math.floor((rect.height - 2) / 2), all.length - (rect.height - 2)));
    return { rect, lines: fitAll(all.slice(top, top + rect.height - 2), rect.width - 2), label: " Jobs (↑↓ select, k kills, Esc closes) ", border: true, focused: true };
  }
  const rect = centered(cols, rows, 90, Math.min(rows - 2, o.items.length + 2));
  const lines = listLines(o.items, o.selected, rect.width - 2, rect.height - 2, theme);
  return { rect, lines: fitAll(lines, rect.width - 2), label: ` ${o.title} `, border: true, focused: true };
}
