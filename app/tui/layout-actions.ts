import type { TuiController } from "./controller.js";
import type { KeyAction } from "./keymap.js";

/*
 * The keys that change the screen itself rather than the session: side panes
 * (hide, zoom), the mouse, and job control.
 */

/** Alt-T, Alt-D, Alt-P, Alt-Z and `/layout`: a hidden pane gives its room to the transcript; the choice is remembered. */
export function changePanes(c: TuiController, change: "tools" | "diff" | "plan" | "zoom" | "all"): void {
  const panes = c.ui.panes;
  const hasPlan = Boolean(c.view.plan?.length);
  if (change === "tools") panes.tools = !panes.tools;
  else if (change === "diff") panes.diff = !panes.diff;
  else if (change === "plan") panes.plan = !panes.plan;
  else if (change === "all") Object.assign(panes, { tools: true, diff: true, plan: true });
  else {
    // The plan panel counts only while there is a plan: without one, hiding the other two is zoomed.
    const zoomed = !panes.tools && !panes.diff && !(panes.plan && hasPlan);
    Object.assign(panes, { tools: zoomed, diff: zoomed, plan: zoomed });
  }
  if ((c.ui.focus === "tools" && !panes.tools) || (c.ui.focus === "diff" && !panes.diff)) c.ui.focus = "input";
  c.deps.savePanes?.({ ...panes });
  const shown = [panes.tools ? "tools" : "", panes.diff ? "diff" : "", panes.plan && hasPlan ? "plan" : ""].filter(Boolean);
  c.note(shown.length ? `panes: transcript, ${shown.join(", ")}` : "zoomed: the transcript only (Alt-Z brings the panes back)");
}

/** The layout, mouse and suspend actions; false for any other action. */
export function screenAction(c: TuiController, action: KeyAction): boolean {
  switch (action) {
    case "toggle-tools": changePanes(c, "tools"); return true;
    case "toggle-diff": changePanes(c, "diff"); return true;
    case "toggle-plan": changePanes(c, "plan"); return true;
    case "zoom": changePanes(c, "zoom"); return true;
    case "toggle-mouse": {
      if (!c.deps.toggleMouse) return true;
      const on = c.deps.toggleMouse();
      c.note(on ? "mouse: Keen (wheel scrolls the panes)" : "mouse released: select and copy as usual; Alt-M takes it back", 4000);
      return true;
    }
    case "suspend":
      c.deps.suspend?.();
      return true;
    default:
      return false;
  }
}
