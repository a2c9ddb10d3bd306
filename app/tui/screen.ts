import type { Widgets } from "blessed";
import type { BlessedCore } from "./blessed-core.js";
import type { Theme } from "../../themes/index.js";
import type { Frame, PaneFrame } from "./frame.js";
import { charWidth, forBlessed, textWidth, truncate, wideEmojiSource } from "./text.js";

/*
 * The blessed glue. blessed only draws: Keen decodes input itself
 * (keys.ts), so the screen gets a silent input stream, and each box gets
 * finished lines (already sanitized, styled and fitted to its width) with
 * tags off. A frame is wrapped in synchronized output (CSI ?2026) so a
 * terminal that supports it never shows half of one.
 */

const SYNC_START = "\x1b[?2026h";
const SYNC_END = "\x1b[?2026l";

let patched = false;

/** The terminal blessed draws for, whatever TERM says: Keen's own code handles what differs (terminal.ts, keys.ts). */
const TERMINAL = "xterm-256color";

/**
 * Fixes two blessed problems once per process: the xterm-256color `Setulc`
 * string crashes its terminfo compiler on some machines (STACK.md), and its
 * width table counts emoji as one cell where terminals use two, which shifts
 * the rest of the line.
 */
export function patchBlessed(blessed: BlessedCore): void {
  if (patched) return;
  patched = true;
  const tput = blessed.Tput.prototype;
  const compile = tput._compile as (this: unknown, info: unknown, key: string, str: string) => unknown;
  tput._compile = function (this: unknown, info: unknown, key: string, str: string) {
    if (key === "Setulc") return () => "";
    // Each string capability (~400 for xterm) is compiled to a function at the first call that needs it, not
    // all at start: compiling every one was ~25 ms of the first frame, and a session calls a few dozen.
    if (typeof str !== "string" || !str || key === "init_file" || key === "reset_file") return compile.call(this, info, key, str);
    let compiled: ((...args: unknown[]) => unknown) | undefined;
    const tput = this;
    return function (this: unknown, ...args: unknown[]) {
      compiled ??= compile.call(tput, info, key, str) as (...args: unknown[]) => unknown;
      return compiled.apply(this, args);
    };
  };
  // Keen always draws for TERMINAL. blessed cannot parse the system's terminfo for it where
  // ncurses writes its 32-bit number format (6.1 and later: current Linux distributions), and falls back to the
  // copy it ships only after reading and parsing that one (~3–5 ms of the first frame). Its own copy comes first.
  type Terminal = { terminal: string; termcap?: boolean; error: Error | null; _useInternalInfo(name: string): void };
  const setup = tput.setup as (this: Terminal) => void;
  tput.setup = function (this: Terminal) {
    if (this.terminal === TERMINAL && !this.termcap) {
      try {
        this.error = null;
        return this._useInternalInfo(this.terminal);
      } catch {
        // Not shipped or not readable: blessed's own order (the system's copy, then its fallbacks).
      }
    }
    return setup.call(this);
  };
  // A label's resize handler runs a tick later and crashes when the label was removed in
  // between (a pane that moves and loses its label in one frame): guard it.
  type Labelled = {
    _label?: { rtop: number }; _labelResize?: unknown; childBase?: number; itop: number; screen: { autoPadding: boolean; render(): void };
    removeListener(e: string, f: unknown): void; on(e: string, f: unknown): void;
  };
  const element = blessed.Element.prototype;
  const setLabel = element.setLabel as (this: Labelled, ...a: unknown[]) => void;
  element.setLabel = function (this: Labelled, ...args: unknown[]) {
    const fresh = !this._label;
    setLabel.apply(this, args);
    if (!fresh || !this._labelResize) return;
    this.removeListener("resize", this._labelResize);
    // blessed's own reposition, run only while the label still exists.
    const reposition = () => {
      if (!this._label) return;
      this._label.rtop = (this.childBase ?? 0) - (this.screen.autoPadding ? this.itop : 0);
      this.screen.render();
    };
    this.on("resize", (this._labelResize = () => setImmediate(reposition)));
  };
  const unicode = blessed.unicode;
  // Its tab width asks the screen, through blessed's index (every widget) when unset: Keen loads only the screen.
  unicode.blessed ??= { screen: blessed.screen };
  const chars = unicode.chars as Record<string, RegExp>;
  chars.all = new RegExp(`(${chars.swide!.source.slice(1, -1)}|${wideEmojiSource()}|${chars.wide!.source.slice(1, -1)})`, "g");
  const original = unicode.charWidth as (str: string | number, i?: number) => number;
  unicode.charWidth = (str: string | number, i?: number) => {
    const cp = typeof str === "number" ? str : (str.codePointAt(i ?? 0) ?? 0);
    return cp === 0x09 ? original(str, i) : charWidth(cp);
  };
}

/** The terminal as the controller sees it: a size, frames in, and a way to step aside for $EDITOR. */
export interface Surface {
  size(): { cols: number; rows: number };
  draw(frame: Frame): void;
  /** Forgets what the terminal shows so the next draw repaints every cell. */
  invalidate(): void;
  leave(): void;
  enter(): void;
  destroy(): void;
}

interface PaneBoxes {
  box: Widgets.BoxElement;
  last: { content: string; rect: string; label?: string; focused?: boolean; visible: boolean };
}

export function createBlessedSurface(blessed: BlessedCore, input: NodeJS.ReadableStream, output: NodeJS.WritableStream, getTheme: () => Theme): Surface {
  patchBlessed(blessed);
  const screen = blessed.screen({
    input, output, terminal: TERMINAL, fullUnicode: true, smartCSR: true, autoPadding: false,
    warnings: false, dockBorders: false, ignoreLocked: ["C-c"], title: "keen",
  } as unknown as Widgets.IScreenOptions) as Widgets.Screen & { enter(): void; leave(): void };
  screen.program.hideCursor();
  const make = (border: boolean): PaneBoxes => ({
    box: blessed.box({ parent: screen, tags: false, wrap: false, border: border ? { type: "line" } : undefined, style: {}, hidden: true }),
    last: { content: "", rect: "", visible: false },
  });
  const panes = {
    transcript: make(true), bare: make(false), tools: make(true), diff: make(true), plan: make(true), input: make(true), queue: make(false), status: make(false),
    popup: make(true), overlay: make(true),
  };

  const place = (pane: PaneBoxes, frame: PaneFrame | undefined) => {
    const { box, last } = pane;
    if (!frame || frame.rect.width <= 0 || frame.rect.height <= 0) {
      if (last.visible) box.hide();
      last.visible = false;
      return;
    }
    const r = frame.rect;
    const rect = `${r.left},${r.top},${r.width},${r.height}`;
    if (rect !== last.rect) {
      Object.assign(box, { left: r.left, top: r.top, width: r.width, height: r.height });
      last.rect = rect;
    }
    const theme = getTheme();
    const style = frame.focused ? theme.tokens.borderFocus : theme.tokens.border;
    if (frame.border) box.style.border = { fg: style.fg ?? "default", bold: !!style.bold } as never;
    // blessed wraps a title wider than its border onto the box's first row, over the content it
    // labels: it is cut to the border between "┌─" and "─┐".
    const label = frame.label && textWidth(frame.label) > r.width - 4 ? `${truncate(frame.label.trimEnd(), r.width - 5)} ` : frame.label;
    if (label !== last.label || frame.focused !== last.focused) {
      if (label) box.setLabel(label);
      else if (last.label) box.removeLabel();
      last.label = label;
      last.focused = frame.focused;
    }
    const content = frame.lines.map(forBlessed).join("\n");
    if (content !== last.content) {
      box.setContent(content);
      last.content = content;
    }
    if (!last.visible) box.show();
    last.visible = true;
  };

  return {
    size: () => ({ cols: screen.width as number, rows: screen.height as number }),
    draw(frame) {
      place(panes.transcript, frame.transcript.border ? frame.transcript : undefined);
      place(panes.bare, frame.transcript.border ? undefined : frame.transcript);
      place(panes.tools, frame.tools);
      place(panes.diff, frame.diff);
      place(panes.plan, frame.plan);
      place(panes.input, frame.input);
      place(panes.queue, frame.queue);
      place(panes.status, frame.status);
      place(panes.popup, frame.popup);
      place(panes.overlay, frame.overlay);
      if (frame.popup) panes.popup.box.setFront();
      if (frame.overlay) panes.overlay.box.setFront();
      const program = screen.program as unknown as { _write(text: string): void };
      program._write(SYNC_START);
      screen.render();
      program._write(SYNC_END);
    },
    invalidate() {
      screen.realloc();
      for (const pane of Object.values(panes)) pane.last.content = "\0";
    },
    leave() {
      screen.leave();
    },
    enter() {
      screen.enter();
      screen.program.hideCursor();
    },
    destroy() {
      screen.destroy();
    },
  };
}
