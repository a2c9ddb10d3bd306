import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { FileGuard } from "../permissions/guard.js";
import { listField, parseFrontmatter, stringField } from "./frontmatter.js";
import { cliTool } from "../agent/cli-tools.js";

/*
 * Custom slash commands: markdown files whose body is a prompt template.
 * Read from the user's `<config>/commands/`, then the project's
 * `.claude/commands/` (read-only, so commands written for Claude Code work),
 * then `.keen/commands/`; a later directory's command replaces an earlier
 * one of the same name. `sub/name.md` is the command `sub:name`.
 * They are repository text and need no trust, and they never widen what a
 * turn may do: `allowed-tools` only narrows the tools of the turn they run,
 * and an `@path` include reads through the filesystem guard.
 */

/** Where commands come from, lowest precedence first. */
export type CommandSource = "user" | "claude" | "project";

/** A command as `list-commands` lists it. */
export interface CustomCommandInfo {
  name: string;
  description: string;
  argument_hint?: string;
  model?: string;
  allowed_tools?: string[];
  source: CommandSource;
  /** The file, relative to the workspace root for project commands. */
  file: string;
}

interface CustomCommand extends CustomCommandInfo {
  body: string;
}

/** What a command expands to for one turn. */
export interface ExpandedCommand {
  text: string;
  model?: string;
  /** Tool names the turn keeps (a subset of the session's); absent: all of them. */
  allowedTools?: string[];
}

const NAME = /^[a-z0-9][a-z0-9_.-]*(?::[a-z0-9][a-z0-9_.-]*)*$/;
const MAX_FILES = 500;
const MAX_COMMAND_BYTES = 256 * 1024;
const MAX_INCLUDE_BYTES = 100 * 1024;

/** `Bash(git status:*)` → `bash`; `Read` → `read_file`; Keen names stay. */
export function keenToolName(entry: string): string {
  const bare = entry.replace(/\(.*\)$/, "").trim();
  // Claude Code's tool names as Keen's (THE table in app/agent/cli-tools.ts), so an existing command's `allowed-tools` means the same here.
  return cliTool(bare)?.keen ?? bare;
}

/** The command directories for a workspace, lowest precedence first. */
export function commandDirs(configDir: string | undefined, workspace: string): { dir: string; source: CommandSource }[] {
  return [
    ...(configDir ? [{ dir: join(configDir, "commands"), source: "user" as const }] : []),
    { dir: join(workspace, ".claude", "commands"), source: "claude" },
    { dir: join(workspace, ".keen", "commands"), source: "project" },
  ];
}

function markdownFiles(dir: string, prefix: string[] = [], found: { path: string; parts: string[] }[] = []): typeof found {
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return found;
  }
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (found.length >= MAX_FILES || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory() && prefix.length < 3) markdownFiles(path, [...prefix, entry.name], found);
    else if (entry.name.endsWith(".md")) found.push({ path, parts: [...prefix, entry.name.slice(0, -3)] });
  }
  return found;
}

function firstLine(body: string): string {
  const line = body.split("\n").map((l) => l.replace(/^#+\s*/, "").trim()).find(Boolean) ?? "";
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/** Every custom command, by name (later sources replace earlier ones). Unreadable or badly named files are skipped. */
export function loadCommands(configDir: string | undefined, workspace: string): CustomCommand[] {
  const byName = new Map<string, CustomCommand>();
  for (const { dir, source } of commandDirs(configDir, workspace)) {
    for (const file of markdownFiles(dir)) {
      const name = file.parts.join(":").toLowerCase();
      if (!NAME.test(name)) continue;
      let text: string;
      try {
        if (statSync(file.path).size > MAX_COMMAND_BYTES) continue;
        text = readFileSync(file.path, "utf8");
      } catch {
        continue;
      }
      const { data, body } = parseFrontmatter(text);
      const allowed = listField(data, "allowed-tools")?.map(keenToolName);
      const model = stringField(data, "model");
      const hint = stringField(data, "argument-hint");
      byName.set(name, {
        name, source, body,
        description: stringField(data, "description") ?? (firstLine(body) || `custom command (${source})`),
        file: source === "user" ? file.path : relative(workspace, file.path),
        ...(hint ? { argument_hint: hint } : {}),
        ...(model ? { model } : {}),
        ...(allowed ? { allowed_tools: allowed } : {}),
      });
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** Splits arguments as a shell would for words: quotes group, no expansion. */
export function splitArguments(args: string): string[] {
  const words: string[] = [];
  for (const m of args.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3] ?? "");
  return words;
}

/**
 * `$ARGUMENTS` is the whole argument text, `$1`…`$9` its words. A template
 * with neither gets the arguments appended, so they are never dropped.
 */
export function substituteArguments(body: string, args: string): string {
  const words = splitArguments(args);
  const uses = /\$ARGUMENTS|\$[1-9]/.test(body);
  const text = body.replace(/\$ARGUMENTS|\$([1-9])/g, (whole, n: string | undefined) => (n ? words[Number(n) - 1] ?? "" : args));
  return !uses && args.trim() ? `${text.trimEnd()}\n\nARGUMENTS: ${args.trim()}` : text;
}

/**
 * `@path` words name files to include: each one that exists is read through
 * the guard and appended after the text; one the guard refuses is named with
 * the reason instead. A word that names no file (`@decorator`) is left alone.
 */
export function includeFiles(text: string, cwd: string, guard: FileGuard): string {
  const blocks: string[] = [];
  const seen = new Set<string>();
  for (const m of text.matchAll(/(?:^|[\s(])@([^\s`'"()]+)/g)) {
    const ref = m[1]!.replace(/[.,;:!?]+$/, "");
    const path = resolve(cwd, ref);
    if (seen.has(path)) continue;
    seen.add(path);
    let isFile = false;
    try {
      isFile = statSync(path).isFile();
    } catch {
      continue;
    }
    if (!isFile) continue;
    const decision = guard.checkRead(path);
    if (!decision.ok) {
      blocks.push(`(@${ref} not included: ${decision.reason})`);
      continue;
    }
    try {
      const buffer = readFileSync(decision.path);
      const cut = buffer.length > MAX_INCLUDE_BYTES;
      const body = buffer.subarray(0, MAX_INCLUDE_BYTES).toString("utf8");
      blocks.push(`Contents of ${ref}${cut ? ` (first ${MAX_INCLUDE_BYTES} bytes of ${buffer.length})` : ""}:\n\`\`\`\n${body}\n\`\`\``);
    } catch (error) {
      blocks.push(`(@${ref} not included: ${(error as Error).message})`);
    }
  }
  return blocks.length ? `${text.trimEnd()}\n\n${blocks.join("\n\n")}` : text;
}

/** The session's commands: listed fresh each time (files change while a session runs), expanded for a turn. */
export function createCommandSource(options: { configDir?: string; workspace: string; cwd: string; guard: FileGuard }) {
  const load = () => loadCommands(options.configDir, options.workspace);
  return {
    listCommands(): CustomCommandInfo[] {
      return load().map(({ body: _, ...info }) => info);
    },
    /** The command's prompt for `args`, or undefined when there is no such command. */
    expandCommand(name: string, args: string): ExpandedCommand | undefined {
      const command = load().find((c) => c.name === name.toLowerCase().replace(/^\//, ""));
      if (!command) return undefined;
      const text = includeFiles(substituteArguments(command.body.trim(), args), options.cwd, options.guard);
      return { text, ...(command.model ? { model: command.model } : {}), ...(command.allowed_tools ? { allowedTools: command.allowed_tools } : {}) };
    },
  };
}
