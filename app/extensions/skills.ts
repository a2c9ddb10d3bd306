import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { parseFrontmatter, stringField } from "./frontmatter.js";

/*
 * Agent Skills (agentskills.io): folders holding a `SKILL.md` whose
 * frontmatter names the skill and says when to use it. Only the names,
 * descriptions and folders go into the system prompt; the model loads a
 * skill's body with the `skill` tool when a task calls for it, then reads the
 * folder's other files with read_file. Skills are text: they need no trust
 * and never widen permissions (a SKILL.md's `allowed-tools` is ignored, see
 * docs/extensions.md).
 *
 * Where they come from, lowest precedence first (a later skill of the same
 * name replaces an earlier one, so the project's beat the user's and Keen's
 * own directories beat the shared ones):
 *   user:    ~/.agents/skills, ~/.claude/skills, <config>/skills
 *   project: <workspace>/.agents/skills, <workspace>/.claude/skills, <workspace>/.keen/skills
 */

export type SkillSource = "user" | "project";

/** A skill as `list-skills` lists it and the system prompt names it. */
export interface SkillInfo {
  name: string;
  description: string;
  /** The skill's folder (absolute). */
  path: string;
  source: SkillSource;
}

/** A folder with a SKILL.md that could not be used, and why. */
export interface SkippedSkill {
  path: string;
  source: SkillSource;
  reason: string;
}

export interface SkillDiscovery {
  skills: SkillInfo[];
  skipped: SkippedSkill[];
  /**
   * The real paths of skill folders that physically sit inside their skills directory: the
   * file guard lets the file tools read inside them even where the location is otherwise
   * protected (Keen's config directory, ~/.claude). A folder reached through a symlink is not
   * here: it is read, or refused, like any other path.
   */
  readable: string[];
}

// The Agent Skills spec's limits: lowercase letters, digits and single hyphens, at most 64 characters.
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;
const MAX_SKILL_BYTES = 512 * 1024;
const MAX_FOLDERS = 200;

/** The skills directories, lowest precedence first. */
export function skillDirs(options: { configDir?: string; workspace: string; home?: string }): { dir: string; source: SkillSource }[] {
  const user = [
    ...(options.home ? [join(options.home, ".agents", "skills"), join(options.home, ".claude", "skills")] : []),
    ...(options.configDir ? [join(options.configDir, "skills")] : []),
  ];
  const project = [".agents", ".claude", ".keen"].map((d) => join(options.workspace, d, "skills"));
  return [...user.map((dir) => ({ dir, source: "user" as const })), ...project.map((dir) => ({ dir, source: "project" as const }))];
}

/** One folder's skill, or why it is skipped; undefined when the folder has no SKILL.md (it is not a skill). */
export function readSkill(folder: string, source: SkillSource): SkillInfo | SkippedSkill | undefined {
  const file = join(folder, "SKILL.md");
  let text: string;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) return undefined;
    if (stat.size > MAX_SKILL_BYTES) return { path: folder, source, reason: `SKILL.md is larger than ${MAX_SKILL_BYTES / 1024} KiB` };
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    return { path: folder, source, reason: `SKILL.md cannot be read: ${(error as Error).message}` };
  }
  const { data, error } = parseFrontmatter(text);
  if (error) return { path: folder, source, reason: `SKILL.md's ${error}` };
  const name = stringField(data, "name");
  const description = stringField(data, "description");
  if (!name) return { path: folder, source, reason: "SKILL.md's frontmatter has no name" };
  if (name.length > MAX_NAME || !NAME.test(name)) {
    return { path: folder, source, reason: `the name "${name}" is not a skill name (lowercase letters, digits and single hyphens, at most ${MAX_NAME} characters)` };
  }
  if (!description) return { path: folder, source, reason: `SKILL.md's frontmatter has no description (the model chooses a skill by it)` };
  if (description.length > MAX_DESCRIPTION) return { path: folder, source, reason: `the description is longer than ${MAX_DESCRIPTION} characters` };
  return { name, description: description.replace(/\s+/g, " "), path: folder, source };
}

function isSymlink(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink() ?? false;
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

/** Where to look, and (optional) the file guard's word on a SKILL.md reached through a symlink: a refusal's reason, or undefined. */
export interface SkillOptions {
  configDir?: string;
  workspace: string;
  home?: string;
  canRead?: (path: string) => string | undefined;
}

/** Every skill of the directories, by name (later directories replace earlier ones), and the folders skipped. */
export function discoverSkills(options: SkillOptions): SkillDiscovery {
  const byName = new Map<string, SkillInfo>();
  const skipped: SkippedSkill[] = [];
  const readable = new Set<string>();
  const seenDirs = new Set<string>();
  for (const { dir, source } of skillDirs(options)) {
    // The same directory twice (a workspace at home, a config dir under ~/.claude): read once.
    const realDir = realOrUndefined(dir);
    if (!realDir || seenDirs.has(realDir)) continue;
    seenDirs.add(realDir);
    let entries: string[];
    try {
      entries = readdirSync(dir).filter((n) => !n.startsWith(".")).sort().slice(0, MAX_FOLDERS);
    } catch {
      continue;
    }
    const here = new Map<string, string>();
    // Where a folder physically inside this directory would be, with the directory itself not a symlink.
    const physical = isSymlink(dir) ? undefined : join(realOrUndefined(dirname(dir)) ?? dirname(dir), basename(dir));
    for (const entry of entries) {
      const folder = join(dir, entry);
      if (!(statSync(folder, { throwIfNoEntry: false })?.isDirectory() ?? false)) continue;
      const inside = Boolean(physical) && !isSymlink(folder) && realOrUndefined(folder) === join(physical!, entry);
      // A folder (or SKILL.md) that leads elsewhere is read only where the file guard would let read_file read it.
      const file = join(folder, "SKILL.md");
      if (options.canRead && !(inside && realOrUndefined(file) === join(physical!, entry, "SKILL.md")) && statSync(file, { throwIfNoEntry: false })) {
        const why = options.canRead(file);
        if (why) {
          skipped.push({ path: folder, source, reason: why });
          continue;
        }
      }
      const skill = readSkill(folder, source);
      if (!skill) continue;
      if (!("name" in skill)) {
        skipped.push(skill);
        continue;
      }
      const clash = here.get(skill.name);
      if (clash) {
        skipped.push({ path: folder, source, reason: `the name "${skill.name}" is already used by ${clash}` });
        continue;
      }
      here.set(skill.name, folder);
      byName.set(skill.name, skill);
      if (inside) readable.add(join(physical!, entry));
    }
  }
  const skills = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  return { skills, skipped, readable: [...readable] };
}

/** Characters of skill names and descriptions the system prompt takes; past it, skills are named without descriptions, then left out. */
export const SKILLS_BUDGET = 8_000;
const PROMPT_DESCRIPTION = 300;

/** The system prompt's skills section, or undefined without skills. */
export function skillsSection(skills: SkillInfo[], budget = SKILLS_BUDGET): string | undefined {
  if (!skills.length) return undefined;
  const lines: string[] = [];
  let left = budget;
  for (const [i, skill] of skills.entries()) {
    const description = skill.description.length > PROMPT_DESCRIPTION ? `${skill.description.slice(0, PROMPT_DESCRIPTION - 1)}…` : skill.description;
    const line = `- ${skill.name}: ${description} (${skill.path})`;
    if (line.length > left) {
      lines.push(`[${skills.length - i} more skills left out: the skills budget (${budget} characters) is spent; the skill tool names them all]`);
      break;
    }
    lines.push(line);
    left -= line.length;
  }
  return [
    "Skills: instructions and files for particular tasks, each in its own folder. When a task matches a skill's description, call the skill tool with its name before you start and follow what it says; read the files it refers to with read_file (their paths are relative to the skill's folder).",
    ...lines,
  ].join("\n");
}

/**
 * The session's skills: discovered when the session is set up (the system prompt lists
 * those) and again on each `list-skills` and `skill` call, so a skill added or edited since
 * is found. The file guard asks `readable()` on each check.
 */
export function createSkillCatalog(options: SkillOptions) {
  // Read on first use, not here: `canRead` may ask a guard that is built after the catalog.
  let current: SkillDiscovery | undefined;
  return {
    /** What the session was set up with (or last refreshed to). */
    current: (): SkillDiscovery => (current ??= discoverSkills(options)),
    /** Reads the directories again. */
    refresh(): SkillDiscovery {
      current = discoverSkills(options);
      return current;
    },
    readable: (): readonly string[] => current?.readable ?? [],
  };
}

export type SkillCatalog = ReturnType<typeof createSkillCatalog>;
