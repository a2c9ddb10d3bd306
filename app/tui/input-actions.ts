import type { TuiController } from "./controller.js";
import type { Frame, Pane } from "./frame.js";
import { keyId, type InputEvent } from "./keys.js";
import { lookup, type KeyAction } from "./keymap.js";
import { itemLines } from "./views/transcript.js";
import { toolBlock } from "./views/tool-panel.js";
import { scrollBy } from "./views/window.js";
import { DIFF_AT_FIRST_CHANGE } from "./views/diff-pane.js";
import { runSlash, updateCompletion, acceptCompletion } from "./slash-run.js";
import { parseSlash, SLASH_COMMANDS } from "./slash.js";
import { PERMISSION_KEYS } from "./views/permission.js";
import { Editor } from "./editor.js";
import { searchInput } from "./history-search.js";
import { screenAction } from "./layout-actions.js";
import { pastedImageMention } from "./image-mentions.js";
import { escapeOnEmpty, rewindPickerInput } from "./rewind-actions.js";
import { jobsOverlayInput } from "./jobs-actions.js";

const EXIT_CONFIRM_MS = 2000;

/**
 * One input event, dispatched by what is on top: the permission modal, a
 * pop-up, the completion list, then the keymap for the focused pane.
 * Contract: never throws.
 */
export function handleInput(c: TuiController, ev: InputEvent, frame: Frame | undefined): void {
  if (ev.type === "focus") return;
  if (ev.type === "mouse") return mouse(c, ev, frame);
  const key = ev.type === "key" ? keyId(ev) : undefined;
  // Ctrl-Z suspends from anywhere, a modal or a pop-up included, as in any terminal program.
  if (key === "C-z") return void screenAction(c, "suspend");
  // Only Esc right after Esc opens the rewind picker.
  if (key !== "escape") c.ui.escArmedUntil = 0;
  if (c.view.permissions.length) return permissionInput(c, ev, key);
  if (c.ui.overlay) return overlayInput(c, ev, key);
  if (c.editor.search && searchInput(c, ev, key)) return;
  if (c.ui.completion && key && completionKey(c, key)) return;
  if (ev.type === "paste") {
    c.ui.focus = "input";
    c.editor.paste(pastedImageMention(ev.text) ?? ev.text);
    return changed(c);
  }
  if (ev.type === "text") {
    if (ev.text === "?" && c.editor.isEmpty() && c.ui.focus === "input") return open(c, { kind: "help", scroll: 0 });
    const action = c.ui.focus !== "input" && ev.text.length === 1 ? lookup(ev.text, c.ui.focus) : undefined;
    if (action) return act(c, action, frame);
    c.ui.focus = "input";
    c.editor.insert(ev.text);
    return changed(c);
  }
  const action = lookup(key!, c.ui.focus);
  if (action) act(c, action, frame);
}

function changed(c: TuiController): void {
  updateCompletion(c);
  c.deps.requestFrame(true);
}

function open(c: TuiController, overlay: NonNullable<TuiController["ui"]["overlay"]>): void {
  c.ui.overlay = overlay;
  c.ui.completion = undefined;
  c.deps.requestFrame(true);
}

function paneHeight(frame: Frame | undefined, pane: "transcript" | "tools" | "diff"): number {
  const p = frame?.[pane];
  return p ? Math.max(1, p.rect.height - (p.border ? 2 : 0)) : 10;
}

function scrollPane(c: TuiController, pane: Pane, delta: number, frame: Frame | undefined): void {
  const ui = c.ui;
  if (pane === "diff") {
    ui.diffScroll = Math.max(0, ui.diffScroll + delta);
  } else if (pane === "tools") {
    const width = Math.max(1, (frame?.tools?.rect.width ?? 40) - 2);
    const linesOf = (i: number) => toolBlock(c.view.tools.get(c.view.toolOrder[i]!)!, false, ui.tools.expanded.has(c.view.toolOrder[i]!), width, ui.theme, c.now());
    ui.tools.scroll = scrollBy(c.view.toolOrder.length, linesOf, ui.tools.scroll, paneHeight(frame, "tools"), delta);
  } else {
    const t = frame?.transcript;
    const width = t ? t.rect.width - (t.border ? 2 : 0) : 80;
    const ctx = { theme: ui.theme, width, now: c.now(), thinkingExpanded: ui.thinkingExpanded, outputExpanded: ui.outputExpanded };
    ui.transcriptScroll = scrollBy(c.view.items.length, (i) => itemLines(c.view, i, ctx, c.cache), ui.transcriptScroll, paneHeight(frame, "transcript"), delta);
  }
  c.deps.requestFrame(true);
}

function selectTool(c: TuiController, step: number): void {
  const order = c.view.toolOrder;
  if (!order.length) return;
  const at = c.ui.tools.selected ? order.indexOf(c.ui.tools.selected) : order.length;
  const next = Math.max(0, Math.min(order.length - 1, at + step));
  c.ui.tools.selected = order[next];
  c.ui.tools.scroll = { follow: false, index: next, line: 0 };
  c.deps.requestFrame(true);
}

function act(c: TuiController, action: KeyAction, frame: Frame | undefined): void {
  const { editor, ui } = c;
  const focus = ui.focus;
  if (screenAction(c, action)) return;
  const page = (pane: Pane) => paneHeight(frame, pane === "input" ? "transcript" : pane) - 1;
  switch (action) {
    case "send": return send(c);
    case "newline": editor.insert("\n"); return changed(c);
    case "interrupt":
      if (ui.completion) ui.completion = undefined;
      else if (c.interrupt()) ui.escArmedUntil = 0;
      else if (focus !== "input") ui.focus = "input";
      else if (editor.isEmpty()) return escapeOnEmpty(c);
      return c.deps.requestFrame(true);
    case "cancel":
      if (c.interrupt()) return;
      if (!editor.isEmpty()) {
        editor.setText("");
        return changed(c);
      }
      if (c.exitArmedUntil > c.now()) return c.deps.exit();
      c.exitArmedUntil = c.now() + EXIT_CONFIRM_MS;
      return c.note("Press Ctrl-C again to exit", EXIT_CONFIRM_MS);
    case "exit-if-empty":
      if (editor.isEmpty()) return c.deps.exit();
      editor.delete();
      return changed(c);
    case "history-prev":
      if (c.editQueued()) return;
      editor.up();
      return changed(c);
    case "history-next": editor.down(); return changed(c);
    case "history-search":
      ui.completion = undefined;
      editor.searchHistory();
      return c.deps.requestFrame(true);
    case "page-up": return scrollPane(c, focus === "input" ? "transcript" : focus, -page(focus), frame);
    case "page-down": return scrollPane(c, focus === "input" ? "transcript" : focus, page(focus), frame);
    case "scroll-up": return focus === "tools" ? selectTool(c, -1) : scrollPane(c, focus, -1, frame);
    case "scroll-down": return focus === "tools" ? selectTool(c, 1) : scrollPane(c, focus, 1, frame);
    case "top":
      ui.transcriptScroll = { follow: false, index: 0, line: 0 };
      return c.deps.requestFrame(true);
    case "bottom":
      ui.transcriptScroll = { follow: true, index: 0, line: 0 };
      return c.deps.requestFrame(true);
    case "focus-next": {
      const order = (["transcript", "tools", "diff", "input"] as Pane[]).filter((p) => p === "transcript" || p === "input" || frame?.[p]);
      ui.focus = order[(order.indexOf(focus) + 1) % order.length]!;
      if (ui.focus === "tools" && !ui.tools.selected) selectTool(c, 0);
      return c.deps.requestFrame(true);
    }
    case "cycle-mode": return c.cycleMode();
    case "redraw": return c.deps.redraw();
    case "external-editor": return void externalEdit(c);
    case "toggle-thinking":
      ui.thinkingExpanded = !ui.thinkingExpanded;
      return c.deps.requestFrame(true);
    case "toggle-output":
      ui.outputExpanded = !ui.outputExpanded;
      return c.deps.requestFrame(true);
    case "help": return open(c, { kind: "help", scroll: 0 });
    case "toggle-expand": {
      const id = ui.tools.selected;
      if (id) ui.tools.expanded.has(id) ? ui.tools.expanded.delete(id) : ui.tools.expanded.add(id);
      return c.deps.requestFrame(true);
    }
    case "next-diff":
    case "prev-diff": {
      const n = c.view.diffs.length;
      if (!n) return;
      ui.diffIndex = (ui.diffIndex + (action === "next-diff" ? 1 : n - 1)) % n;
      ui.diffScroll = DIFF_AT_FIRST_CHANGE;
      ui.diffFollow = ui.diffIndex === n - 1;
      return c.deps.requestFrame(true);
    }
    case "complete": return;
    default: return editKey(c, action);
  }
}

function editKey(c: TuiController, action: KeyAction): void {
  const e = c.editor;
  const ops: Partial<Record<KeyAction, () => void>> = {
    "cursor-left": () => e.left(), "cursor-right": () => e.right(), "line-start": () => e.lineStart(), "line-end": () => e.lineEnd(),
    "word-left": () => e.wordLeft(), "word-right": () => e.wordRight(), backspace: () => e.backspace(), delete: () => e.delete(),
    "delete-word": () => e.deleteWordBack(), "kill-line-start": () => e.killToLineStart(), "kill-line-end": () => e.killToLineEnd(),
  };
  ops[action]?.();
  changed(c);
}

function send(c: TuiController): void {
  const text = c.editor.value();
  if (!text.trim()) return;
  const slash = parseSlash(text);
  if (slash && SLASH_COMMANDS.some((s) => s.name === slash.name)) {
    c.editor.take();
    c.ui.completion = undefined;
    runSlash(c, slash.name, slash.arg);
    return c.deps.requestFrame(true);
  }
  c.editor.take();
  c.ui.completion = undefined;
  c.deps.saveHistory?.(text);
  c.prompt(text);
}

async function externalEdit(c: TuiController): Promise<void> {
  if (!c.deps.editExternal) return c.note("no external editor available");
  const edited = await c.deps.editExternal(c.editor.value());
  if (edited !== undefined) c.editor.setText(edited.replace(/\n+$/, ""));
  c.deps.redraw();
}

function completionKey(c: TuiController, key: string): boolean {
  const comp = c.ui.completion!;
  if (key === "up" || key === "down") {
    comp.selected = (comp.selected + (key === "up" ? comp.items.length - 1 : 1)) % comp.items.length;
  } else if (key === "tab") {
    acceptCompletion(c);
  } else if (key === "enter") {
    const typed = c.editor.wordAtCursor().word;
    if (comp.values[comp.selected] === typed || comp.values[comp.selected] === `${typed} `) {
      c.ui.completion = undefined;
      return false; // already complete: Enter sends
    }
    acceptCompletion(c);
  } else if (key === "escape") {
    c.ui.completion = undefined;
  } else return false;
  c.deps.requestFrame(true);
  return true;
}

function permissionInput(c: TuiController, ev: InputEvent, key: string | undefined): void {
  const ui = c.ui.permission;
  if (ui.denying) {
    if (key === "enter") return c.answerPermission("deny", ui.denying.value().trim() || undefined);
    if (key === "escape") ui.denying = undefined;
    else if (ev.type === "text") ui.denying.insert(ev.text);
    else if (ev.type === "paste") ui.denying.insert(ev.text);
    else if (key === "backspace") ui.denying.backspace();
    else if (key === "C-c") c.interrupt();
    return c.deps.requestFrame(true);
  }
  const k = PERMISSION_KEYS;
  if (ev.type === "text") {
    const ch = ev.text.toLowerCase();
    if (ch === k.allowOnce) return c.answerPermission("allow-once");
    if (ch === k.allowAlways) return c.answerPermission("allow-always");
    if (ch === k.deny) return c.answerPermission("deny");
    if (ch === k.denyWithMessage) ui.denying = new Editor();
    return c.deps.requestFrame(true);
  }
  if (key === "pagedown" || key === "down") ui.scroll += key === "down" ? 1 : 10;
  else if (key === "pageup" || key === "up") ui.scroll = Math.max(0, ui.scroll - (key === "up" ? 1 : 10));
  else if (key === "escape" || key === "C-c") c.interrupt();
  else if (key === "S-tab") c.cycleMode();
  c.deps.requestFrame(true);
}

function overlayInput(c: TuiController, ev: InputEvent, key: string | undefined): void {
  const o = c.ui.overlay!;
  const close = () => {
    c.ui.overlay = undefined;
    c.deps.requestFrame(true);
  };
  if (o.kind === "continue") {
    const ch = ev.type === "text" ? ev.text.toLowerCase() : key;
    if (ch === "y" || ch === "enter") {
      c.local({ kind: "local-continue-answered" });
      close();
      return c.prompt("continue");
    }
    if (ch === "n" || ch === "escape") {
      c.local({ kind: "local-continue-answered" });
      return close();
    }
    return;
  }
  if (o.kind === "jobs") return jobsOverlayInput(c, o, ev, key);
  if (o.kind === "help") {
    if (key === "escape" || key === "enter" || (ev.type === "text" && (ev.text === "q" || ev.text === "?"))) return close();
    if (key === "down" || key === "pagedown") o.scroll += key === "down" ? 1 : 10;
    if (key === "up" || key === "pageup") o.scroll = Math.max(0, o.scroll - (key === "up" ? 1 : 10));
    return c.deps.requestFrame(true);
  }
  if (o.kind === "rewind") return rewindPickerInput(c, o.picker, ev, key);
  if (key === "escape" || key === "C-c") return close();
  if (key === "up" || key === "down") o.selected = Math.max(0, Math.min(o.items.length - 1, o.selected + (key === "up" ? -1 : 1)));
  if (key === "pageup" || key === "pagedown") o.selected = Math.max(0, Math.min(o.items.length - 1, o.selected + (key === "pageup" ? -10 : 10)));
  if (key === "enter" && o.items.length) {
    const value = o.values[o.selected]!;
    close();
    return o.pick(value);
  }
  c.deps.requestFrame(true);
}

function mouse(c: TuiController, ev: Extract<InputEvent, { type: "mouse" }>, frame: Frame | undefined): void {
  const inside = (p: Frame["tools"]) => p && ev.x >= p.rect.left && ev.x < p.rect.left + p.rect.width && ev.y >= p.rect.top && ev.y < p.rect.top + p.rect.height;
  const pane: Pane = inside(frame?.tools) ? "tools" : inside(frame?.diff) ? "diff" : inside(frame?.input) ? "input" : "transcript";
  if (ev.action === "wheelup" || ev.action === "wheeldown") {
    if (c.ui.overlay?.kind === "help") c.ui.overlay.scroll = Math.max(0, c.ui.overlay.scroll + (ev.action === "wheelup" ? -3 : 3));
    else if (c.view.permissions.length) c.ui.permission.scroll = Math.max(0, c.ui.permission.scroll + (ev.action === "wheelup" ? -3 : 3));
    else return scrollPane(c, pane === "input" ? "transcript" : pane, ev.action === "wheelup" ? -3 : 3, frame);
    return c.deps.requestFrame(true);
  }
  if (ev.action === "press" && !c.ui.overlay && !c.view.permissions.length) {
    c.ui.focus = pane;
    c.deps.requestFrame(true);
  }
}
