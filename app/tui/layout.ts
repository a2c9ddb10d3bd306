/*
 * Where each pane goes for a terminal size. Wide terminals get a side column
 * (tools above diff); medium ones a strip under the transcript; small ones
 * only the transcript and the input, so 40×10 still works. The user may hide
 * either side pane, or both (zoom): the transcript takes the room. The plan
 * panel (while the model has a plan) tops the side column, sized to the plan
 * up to a third of it; without a side column it is a strip above the input.
 */

/** A pane's outer box, border included. */
export interface Rect {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** The panes of one layout; the tool panel and diff pane are absent when they do not fit. */
export interface Layout {
  transcript: Rect;
  tools?: Rect;
  diff?: Rect;
  /** The model's plan: atop the side column, or a strip above the input. */
  plan?: Rect;
  input: Rect;
  /** Prompts waiting for the current turn to end, between the input and the status bar. */
  queue?: Rect;
  status: Rect;
  /** True when the transcript is drawn without a border (small terminals). */
  bare: boolean;
}

/** Lines of prompt shown before the input box scrolls. */
export function maxInputLines(rows: number): number {
  return Math.max(1, Math.min(10, Math.floor(rows / 3)));
}

/** Rows the queue of prompts may take: a few, fewer on small terminals. */
function queueRows(rows: number, queued: number): number {
  return Math.min(queued, Math.max(1, Math.min(4, Math.floor(rows / 8))));
}

/** Which side panes the user wants (Alt-T, Alt-D, Alt-P, Alt-Z); a hidden pane gives its room to the others. */
export interface PaneChoice {
  tools: boolean;
  diff: boolean;
  plan: boolean;
}

export const ALL_PANES: PaneChoice = { tools: true, diff: true, plan: true };

/** `planRows`: the plan's items (0: no plan, no panel). */
export function layout(cols: number, rows: number, inputLines: number, queued = 0, show: PaneChoice = ALL_PANES, planRows = 0): Layout {
  cols = Math.max(1, cols);
  rows = Math.max(4, rows);
  const status: Rect = { left: 0, top: rows - 1, width: cols, height: 1 };
  const queueHeight = queueRows(rows, queued);
  const queue: Rect | undefined = queueHeight ? { left: 0, top: rows - 1 - queueHeight, width: cols, height: queueHeight } : undefined;
  const inputHeight = Math.min(inputLines, maxInputLines(rows)) + 2;
  const input: Rect = { left: 0, top: rows - 1 - queueHeight - inputHeight, width: cols, height: inputHeight };
  let body = rows - 1 - queueHeight - inputHeight;
  const both = show.tools && show.diff;
  const wantPlan = show.plan && planRows > 0;
  if ((show.tools || show.diff || wantPlan) && cols >= 100 && body >= 16) {
    const side = Math.max(36, Math.min(72, Math.floor(cols * 0.38)));
    const main = cols - side;
    const planHeight = !wantPlan ? 0 : show.tools || show.diff ? Math.min(planRows + 2, Math.floor(body / 3)) : body;
    const rest = body - planHeight;
    const toolsHeight = both ? Math.floor(rest / 2) : show.tools ? rest : 0;
    return {
      transcript: { left: 0, top: 0, width: main, height: body },
      plan: planHeight ? { left: main, top: 0, width: side, height: planHeight } : undefined,
      tools: show.tools ? { left: main, top: planHeight, width: side, height: toolsHeight } : undefined,
      diff: show.diff ? { left: main, top: planHeight + toolsHeight, width: side, height: rest - toolsHeight } : undefined,
      input, queue, status, bare: false,
    };
  }
  // No side column: the plan is a strip above the input, when the transcript keeps most of the height.
  let plan: Rect | undefined;
  if (wantPlan && body >= 12) {
    const height = Math.min(planRows + 2, Math.max(3, Math.floor(body / 4)));
    body -= height;
    plan = { left: 0, top: body, width: cols, height };
  }
  if ((show.tools || show.diff) && cols >= 60 && body >= 16) {
    const strip = Math.max(6, Math.min(12, Math.floor(body * 0.35)));
    const half = both ? Math.floor(cols / 2) : show.tools ? cols : 0;
    return {
      transcript: { left: 0, top: 0, width: cols, height: body - strip },
      tools: show.tools ? { left: 0, top: body - strip, width: half, height: strip } : undefined,
      diff: show.diff ? { left: half, top: body - strip, width: cols - half, height: strip } : undefined,
      plan, input, queue, status, bare: false,
    };
  }
  // Zoomed (both panes hidden) the transcript keeps its border and label when the terminal is big enough for panes.
  const bare = !(cols >= 60 && body >= 16);
  return { transcript: { left: 0, top: 0, width: cols, height: Math.max(0, body) }, plan, input, queue, status, bare };
}
