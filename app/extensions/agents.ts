import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { keenToolName } from "./commands.js";
import { listField, parseFrontmatter, stringField } from "./frontmatter.js";

/*
 * Custom subagents: markdown files whose frontmatter names and describes a
 * specialised agent and whose body is its system prompt, as Claude Code
 * writes them (`.claude/agents/*.md` work unchanged). Read from the user's
 * `<config>/agents/`, then the project's `.claude/agents/` (read-only), then
 * `.keen/agents/`; a later directory's agent replaces an earlier one of the
 * same name. Like custom commands they are repository text and need no trust:
 * `tools` only narrows what the parent turn has, and every call still goes
 * through the session's permission gate.
 */

/** Where agent definitions come from, lowest precedence first. */
export type AgentSource = "user" | "claude" | "project";

/** One agent definition. */
export interface AgentDefinition {
  name: string;
  description: string;
  /** The child's system prompt (the file's body). */
  prompt: string;
  /** Keen tool names (Claude Code's `Read`, `Bash`… translated); absent: the task call's default set. */
  tools?: string[];
  /** A model the file asks for (an alias, a model id or `<provider>/<model>`); the child runs on it (app/tools/task.ts). */
  model?: string;
  source: AgentSource;
  /** The file, relative to the workspace root for project agents. */
  file: string;
}

const NAME = /^[a-z0-9][a-z0-9_.-]*$/;
const MAX_FILES = 200;
const MAX_AGENT_BYTES = 128 * 1024;

/** The agent directories for a workspace, lowest precedence first. */
export function agentDirs(configDir: string | undefined, workspace: string): { dir: string; source: AgentSource }[] {
  return [
    ...(configDir ? [{ dir: join(configDir, "agents"), source: "user" as const }] : []),
    { dir: join(workspace, ".claude", "agents"), source: "claude" },
    { dir: join(workspace, ".keen", "agents"), source: "project" },
  ];
}

/**
 * Parses one agent file; undefined when it is not an agent (no usable name or an empty body).
 * The name is the frontmatter's `name`, else the file's name; `tools` accepts a YAML list or a
 * comma-separated string, `model: inherit` counts as no model.
 */
export function parseAgent(text: string, fileName: string, source: AgentSource, file: string): AgentDefinition | undefined {
  const { data, body, error } = parseFrontmatter(text);
  if (error) return undefined;
  const name = (stringField(data, "name") ?? fileName.replace(/\.md$/, "")).toLowerCase();
  const prompt = body.trim();
  if (!NAME.test(name) || !prompt) return undefined;
  const tools = listField(data, "tools")?.map(keenToolName);
  const model = stringField(data, "model");
  return {
    name, prompt, source, file,
    description: stringField(data, "description") ?? `custom agent (${source})`,
    ...(tools?.length ? { tools: [...new Set(tools)] } : {}),
    ...(model && model.toLowerCase() !== "inherit" ? { model } : {}),
  };
}

/** Every agent definition, by name (later sources replace earlier ones), sorted by name. Unreadable files are skipped. */
export function loadAgents(configDir: string | undefined, workspace: string): AgentDefinition[] {
  const byName = new Map<string, AgentDefinition>();
  for (const { dir, source } of agentDirs(configDir, workspace)) {
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith(".md") && !n.startsWith(".")).sort().slice(0, MAX_FILES);
    } catch {
      continue;
    }
    for (const fileName of names) {
      const path = join(dir, fileName);
      let text: string;
      try {
        if (!statSync(path).isFile() || statSync(path).size > MAX_AGENT_BYTES) continue;
        text = readFileSync(path, "utf8");
      } catch {
        continue;
      }
      const agent = parseAgent(text, fileName, source, source === "user" ? path : relative(workspace, path));
      if (agent) byName.set(agent.name, agent);
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}
