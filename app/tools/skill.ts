import { readdirSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";
import { parseFrontmatter } from "../extensions/frontmatter.js";
import { readGuarded } from "../permissions/guarded-open.js";
import { defineTool, fail, strArg, toolInput } from "./define.js";
import type { Tool, ToolContext } from "./tool.js";

const SkillInput = toolInput("skill", () => z.object({
  name: z.string().trim().min(1).describe("The skill's name, as the system prompt lists it"),
}));

/** The tool's name: the system prompt lists the skills only when the session offers it. */
export const SKILL_TOOL_NAME = "skill";

const MAX_LISTED = 200;
const MAX_DEPTH = 4;

/** The folder's files other than SKILL.md, relative to it (hidden entries and node_modules left out). */
function folderFiles(root: string): { files: string[]; more: boolean } {
  const files: string[] = [];
  let more = false;
  const walk = (dir: string, prefix: string, depth: number) => {
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (depth < MAX_DEPTH) walk(join(dir, entry.name), rel, depth + 1);
      } else if (rel !== "SKILL.md") {
        if (files.length >= MAX_LISTED) {
          more = true;
          return;
        }
        files.push(rel);
      }
    }
  };
  walk(root, "", 0);
  return { files, more };
}

/**
 * `skill`: loads one of the skills the system prompt lists (app/extensions/skills.ts):
 * the body of its SKILL.md, read through the file guard, and a listing of the folder's
 * other files, which the model then reads with read_file (the guard lets it read inside
 * discovered skill folders, read-only). It only reads, so it is a `read` tool that no
 * permission mode asks about. Its result carries the skill, which the tool runner emits
 * as a `skill-loaded` event.
 */
export function createSkillTool(ctx: ToolContext): Tool {
  return defineTool(
    "skill",
    "Load a skill listed under Skills in the system prompt: returns its instructions (SKILL.md) and the list of its other files. " +
      "Call it when a task matches a skill's description, then follow the instructions; read the files they refer to with read_file.",
    SkillInput,
    async ({ name }) => {
      const found = ctx.skills?.refresh().skills ?? [];
      const skill = found.find((s) => s.name === name);
      if (!skill) {
        return fail(found.length ? `No skill named "${name}". Skills: ${found.map((s) => s.name).join(", ")}.` : `No skill named "${name}": no skills are installed.`);
      }
      const read = readGuarded(ctx.guard, join(skill.path, "SKILL.md"));
      if (!read.ok) return fail(`The skill "${name}" cannot be loaded: ${read.reason}`);
      const { body } = parseFrontmatter(read.data.toString("utf8"));
      const { files, more } = folderFiles(skill.path);
      const listing = files.length
        ? `Its other files (paths relative to the folder; read them with read_file when the instructions call for them):\n${files.map((f) => `- ${f}`).join("\n")}${more ? `\n- … more files not listed (first ${MAX_LISTED} shown)` : ""}`
        : "It has no other files.";
      const content = `Skill "${skill.name}", folder ${skill.path}\n${listing}\n\n${body.trim()}`;
      return { content, is_error: false, skill: { name: skill.name, path: skill.path } };
    },
    {
      kind: "read",
      mutates: false,
      describe: (args) => ({ title: `Load skill ${strArg(args, "name") ?? ""}`.trim(), locations: [] }),
    },
  );
}
