import { MODE_CYCLE } from "../../protocol/modes.js";
import { THEME_NAMES } from "../../themes/index.js";

/*
 * The slash commands: one table for completion, help and dispatch.
 */

/** A slash command typed in the prompt. */
export interface SlashCommand {
  name: string;
  args?: string;
  help: string;
}

export const SLASH_COMMANDS: SlashCommand[] = [
  { name: "new", help: "start a new session" },
  { name: "sessions", help: "pick a session of this workspace and resume it" },
  { name: "model", args: "[provider/model]", help: "pick the model for the next turns" },
  { name: "mode", args: `[${MODE_CYCLE.join("|")}]`, help: "set or cycle the permission mode" },
  { name: "theme", args: "[name]", help: `set or cycle the theme (${THEME_NAMES.join(", ")})` },
  { name: "compact", args: "[instructions]", help: "summarise the conversation so far to free context" },
  { name: "retry", help: "send the last prompt again (after a failed or interrupted turn)" },
  { name: "copy", help: "copy the last answer to the clipboard (OSC 52)" },
  { name: "undo", help: "revert the last turn's file writes and edits (shows them first; /undo again confirms)" },
  { name: "export", args: "[file]", help: "write the transcript as markdown (default keen-<session>.md here; asks before overwriting)" },
  { name: "layout", args: "[tools|diff|zoom|all]", help: "hide or show the tool panel or diff pane, zoom the transcript (remembered)" },
  { name: "help", help: "keys and commands" },
  { name: "exit", help: "leave Keen (the session stays resumable)" },
];

/** Commands whose names start with what was typed after `/`. */
export function completeSlash(typed: string): SlashCommand[] {
  const word = typed.replace(/^\//, "").toLowerCase();
  return SLASH_COMMANDS.filter((c) => c.name.startsWith(word));
}

/** `/model openai/x` → { name: "model", arg: "openai/x" }; text that is not a command → undefined. */
export function parseSlash(text: string): { name: string; arg: string } | undefined {
  const m = /^\/([a-z-]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return undefined;
  return { name: m[1]!, arg: (m[2] ?? "").trim() };
}
