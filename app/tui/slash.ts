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
  { name: "undo", help: "revert the last turn's file writes and edits (shows them first; /undo again confirms); again: the turn before" },
  { name: "rewind", help: "go back to before an earlier prompt: the conversation, the files or both (also Esc Esc on an empty prompt)" },
  { name: "fork", args: "[N]", help: "continue in a new session sharing this one's history (up to before prompt N); this one stays as it is" },
  { name: "export", args: "[file]", help: "write the transcript as markdown (default keen-<session>.md here; asks before overwriting)" },
  { name: "layout", args: "[tools|diff|plan|zoom|all]", help: "hide or show the tool panel, diff pane or plan panel, zoom the transcript (remembered)" },
  { name: "jobs", args: "[kill <id>]", help: "the background jobs the model started: command, state, runtime (↑↓ select, k kills); kill <id> ends one" },
  { name: "init", help: "ask the model to write an AGENTS.md for this project" },
  { name: "skills", help: "list the Agent Skills the model can load (Enter starts a prompt using one)" },
  { name: "help", help: "keys and commands" },
  { name: "exit", help: "leave Keen (the session stays resumable)" },
];

/** Commands (Keen's, then the custom ones it does not shadow) whose names start with what was typed after `/`. */
export function completeSlash(typed: string, custom: SlashCommand[] = []): SlashCommand[] {
  const word = typed.replace(/^\//, "").toLowerCase();
  return [...SLASH_COMMANDS, ...customOnly(custom)].filter((c) => c.name.startsWith(word));
}

/** The custom commands a built-in one of the same name does not shadow (Keen's own commands win). */
export function customOnly(custom: SlashCommand[]): SlashCommand[] {
  return custom.filter((c) => !SLASH_COMMANDS.some((s) => s.name === c.name));
}

/** What `/init` sends: the model looks at the project and writes its AGENTS.md. */
export const INIT_PROMPT = [
  "Write an AGENTS.md file at the root of this workspace for coding agents working on this project.",
  "Look at the project first (README, build and package files, test setup, directory layout, existing AGENTS.md or CLAUDE.md).",
  "Cover briefly: what the project is, how to build, test and lint it (exact commands), the code layout, and conventions a newcomer would get wrong.",
  "Keep it short and factual; if an AGENTS.md exists, improve it rather than starting over.",
].join(" ");

/** `/model openai/x` → { name: "model", arg: "openai/x" }; text that is not a command → undefined. */
export function parseSlash(text: string): { name: string; arg: string } | undefined {
  const m = /^\/([a-z0-9][a-z0-9_.:-]*)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return undefined;
  return { name: m[1]!, arg: (m[2] ?? "").trim() };
}
