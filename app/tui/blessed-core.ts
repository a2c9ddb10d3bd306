import type { Widgets } from "blessed";

/** What Keen draws with: a screen, boxes, and the classes `patchBlessed` (screen.ts) mends. */
export interface BlessedCore {
  screen(options: Widgets.IScreenOptions): Widgets.Screen;
  box(options: Widgets.BoxOptions): Widgets.BoxElement;
  Tput: { prototype: Record<string, unknown> };
  Element: { prototype: Record<string, unknown> };
  unicode: Record<string, unknown>;
}

/**
 * blessed's own index requires all of its 34 widgets at once (images with a PNG decoder, video, a terminal
 * emulator, forms, …), every file compiled from source at each TUI start on Node 20, which has no compile
 * cache for node_modules. Keen uses the screen and the box: these files and what they require are ~35 → ~23
 * ms of a first frame on the 2-core machine. Loaded in the index's order (program, tput, then the widgets),
 * one at a time: blessed's modules require each other in cycles.
 */
export async function loadBlessed(): Promise<BlessedCore> {
  // Literal names, one import each: the bundle keeps them as requires of blessed's files in node_modules.
  const exports = (mod: { default?: unknown }) => mod.default ?? mod;
  await import("blessed/lib/program.js");
  const Tput = exports(await import("blessed/lib/tput.js"));
  const unicode = exports(await import("blessed/lib/unicode.js"));
  await import("blessed/lib/widgets/node.js");
  const screen = exports(await import("blessed/lib/widgets/screen.js"));
  const Element = exports(await import("blessed/lib/widgets/element.js"));
  const box = exports(await import("blessed/lib/widgets/box.js"));
  return { screen, box, Tput, Element, unicode } as BlessedCore;
}
