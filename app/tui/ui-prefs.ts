import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeJsonAtomic } from "../mcp/config-file.js";
import { ALL_PANES, type PaneChoice } from "./layout.js";

/*
 * What the TUI remembers between runs that is a choice made with a key, not
 * a setting: which side panes show (tools, diff, plan). One small JSON file in Keen's data
 * directory (`tui-state.json`), written atomically; a missing, unreadable or
 * hand-broken file is the default, and a failed write is never worth
 * interrupting the user for.
 */

export interface UiPrefs {
  panes: PaneChoice;
}

/** Where the prefs live under Keen's data directory. */
export function uiPrefsPathFor(dataDir: string): string {
  return join(dataDir, "tui-state.json");
}

function readObject(file: string): Record<string, unknown> {
  try {
    const value = JSON.parse(readFileSync(file, "utf8")) as unknown;
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function loadUiPrefs(file: string | undefined): UiPrefs {
  const panes = file ? (readObject(file).panes as Partial<PaneChoice> | undefined) : undefined;
  return {
    panes: {
      tools: typeof panes?.tools === "boolean" ? panes.tools : ALL_PANES.tools,
      diff: typeof panes?.diff === "boolean" ? panes.diff : ALL_PANES.diff,
      plan: typeof panes?.plan === "boolean" ? panes.plan : ALL_PANES.plan,
    },
  };
}

/** Stores the prefs, keeping keys a newer Keen may have added; false when the file could not be written. */
export function saveUiPrefs(file: string | undefined, prefs: UiPrefs): boolean {
  if (!file) return false;
  try {
    writeJsonAtomic(file, { ...readObject(file), panes: prefs.panes }, 0o600);
    return true;
  } catch {
    return false;
  }
}
