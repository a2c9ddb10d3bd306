import { findInstructions, instructionsSection } from "../extensions/instructions.js";
import { skillsSection, type SkillInfo } from "../extensions/skills.js";
import { SKILL_TOOL_NAME } from "../tools/skill.js";

/** What the system prompt is built from. */
export interface SystemPromptOptions {
  cwd: string;
  workspace: string;
  toolNames: string[];
  date?: Date;
  platform?: string;
  /** A paragraph a run adds (e.g. the structured-output instructions). */
  extra?: string;
  /** Keen's config directory: its AGENTS.md comes first among the instructions. */
  configDir?: string;
  /** The Agent Skills found: their names, descriptions and folders are listed (app/extensions/skills.ts). */
  skills?: SkillInfo[];
}

/** Keen's system prompt: role, place, date, tool guidance, the tool-memory contract, the layered AGENTS.md files (app/extensions/instructions.ts), the skills' names and descriptions. */
export function buildSystemPrompt(options: SystemPromptOptions): string {
  const date = (options.date ?? new Date()).toISOString().slice(0, 10);
  const parts = [
    "You are Keen, a coding agent working in the user's terminal. You read and change code in the user's workspace with the tools you are given, and you answer precisely and briefly.",
    `Working directory: ${options.cwd}\nWorkspace root: ${options.workspace}\nPlatform: ${options.platform ?? process.platform}\nToday's date: ${date}`,
  ];
  if (options.toolNames.length) {
    parts.push(
      [
        `Tools: ${options.toolNames.join(", ")}.`,
        "- Prefer read_file, grep, glob and list over shell commands for looking at files; use edit_file for small changes and write_file for new files.",
        "- Each bash call runs in a fresh shell in the working directory: cd and environment changes do not carry over.",
        "- Tool output is not kept in later turns; note what you learned in your memory block.",
        MEMORY_CONTRACT,
      ].join("\n"),
    );
  }
  if (options.extra) parts.push(options.extra);
  const notes = instructionsSection(findInstructions({ configDir: options.configDir, workspace: options.workspace, cwd: options.cwd }));
  if (notes) parts.push(notes);
  // Only when the model can load them: without the skill tool a list of skills is noise.
  const skills = options.toolNames.includes(SKILL_TOOL_NAME) ? skillsSection(options.skills ?? []) : undefined;
  if (skills) parts.push(skills);
  return parts.join("\n\n");
}

/** The tool-memory contract: the answer carries one memory block when tools were used. */
export const MEMORY_CONTRACT = [
  "Tool memory: when this turn used one or more tools, end your answer with exactly one block",
  "<keen_memory>",
  "- durable outcomes only: files read or changed, facts found, commands that worked or failed",
  "</keen_memory>",
  "Keep it short, never paste raw tool output into it, and put nothing after it. When you used no tools in this turn, write no such block. The user does not see this block; later turns do.",
].join("\n");
