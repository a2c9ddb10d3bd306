import { readFileSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";

/*
 * Layered project instructions for the system prompt: the user's own
 * AGENTS.md (in Keen's config directory) first, then one file per directory
 * from the workspace root down to the working directory, nearest last, so
 * the most specific instructions are read last and win where they disagree.
 * In each directory AGENTS.md is read, else CLAUDE.md (so a project set up
 * for Claude Code works unchanged). The files are repository text: reading
 * them widens nothing.
 */

/** One instructions file as it goes into the prompt. */
export interface InstructionFile {
  /** Where it came from, as the prompt names it: `~config/AGENTS.md` or a path relative to the workspace root. */
  origin: string;
  path: string;
  text: string;
}

/** Total characters of instructions the prompt takes; past it, files are cut (nearest kept whole first). */
export const INSTRUCTIONS_BUDGET = 20_000;

const NAMES = ["AGENTS.md", "CLAUDE.md"];

function readIfFile(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return undefined;
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** The first of AGENTS.md / CLAUDE.md in `dir`. */
function fileIn(dir: string): { path: string; text: string } | undefined {
  for (const name of NAMES) {
    const text = readIfFile(join(dir, name));
    if (text !== undefined) return { path: join(dir, name), text };
  }
  return undefined;
}

/** The directories from `workspace` down to `cwd` (only `workspace` when cwd is outside it). */
export function directoriesDown(workspace: string, cwd: string): string[] {
  const root = resolve(workspace);
  const here = resolve(cwd);
  const rel = relative(root, here);
  if (rel.startsWith("..") || rel === ".." || resolve(root, rel) !== here) return [root];
  const dirs = [root];
  let at = root;
  for (const part of rel.split(sep).filter(Boolean)) {
    at = join(at, part);
    dirs.push(at);
  }
  return dirs;
}

/** The instruction files in prompt order: user config, then workspace root down to `cwd`. */
export function findInstructions(options: { configDir?: string; workspace: string; cwd: string }): InstructionFile[] {
  const found: InstructionFile[] = [];
  if (options.configDir) {
    const text = readIfFile(join(options.configDir, "AGENTS.md"));
    if (text !== undefined) found.push({ origin: "user config: AGENTS.md", path: join(options.configDir, "AGENTS.md"), text });
  }
  for (const dir of directoriesDown(options.workspace, options.cwd)) {
    const file = fileIn(dir);
    if (!file) continue;
    const rel = relative(resolve(options.workspace), file.path);
    found.push({ origin: rel, path: file.path, text: file.text });
  }
  return found;
}

/**
 * The prompt section for `files`, within `budget` characters of file text.
 * The nearest files matter most, so the budget is spent from the last file
 * back; a file that does not fit whole is cut at its end and says so, and a
 * file left out entirely is still named, so the model knows it exists.
 */
export function instructionsSection(files: InstructionFile[], budget = INSTRUCTIONS_BUDGET): string | undefined {
  if (!files.length) return undefined;
  let left = budget;
  const kept = new Array<string>(files.length);
  for (let i = files.length - 1; i >= 0; i--) {
    const file = files[i]!;
    const text = file.text.trimEnd();
    if (text.length <= left) {
      kept[i] = `## ${file.origin}\n${text}`;
      left -= text.length;
    } else if (left > 0) {
      kept[i] = `## ${file.origin}\n${text.slice(0, left)}\n[cut: ${text.length - left} of ${text.length} characters left out; read ${file.path} for the rest]`;
      left = 0;
    } else {
      kept[i] = `## ${file.origin}\n[left out: the instructions budget (${budget} characters) is spent; read ${file.path} if needed]`;
    }
  }
  return [
    "Project instructions, from the most general to the most specific (later ones take precedence):",
    ...kept,
  ].join("\n\n");
}
