import type { CallView, ToolKind } from "../../protocol/events.js";

/** One of the claude CLI's own tools, as Keen sees it. */
interface CliTool {
  kind: ToolKind;
  /** Keen's tool of the same job: `--allowed-tools bash` becomes `--allowedTools Bash`; Write and Edit asks are previewed by it. */
  keen?: string;
  /** The CLI's input as the input of `keen`, for a preview of the change. */
  previewArgs?: (input: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * THE table of the claude CLI's tools (the CLI runner): their kinds, for the tool-use and
 * permission-request events Keen writes for them, and Keen's tools that stand for them.
 * A CLI tool missing here is `other` and keeps its own name. Custom commands written for
 * Claude Code name these tools in `allowed-tools` (app/extensions/commands.ts reads them here).
 */
export const CLI_TOOLS: Readonly<Record<string, CliTool>> = {
  Bash: { kind: "exec", keen: "bash" },
  Read: { kind: "read", keen: "read_file" },
  Write: { kind: "edit", keen: "write_file", previewArgs: (i) => ({ path: i.file_path, content: i.content }) },
  Edit: {
    kind: "edit", keen: "edit_file",
    previewArgs: (i) => ({ path: i.file_path, old_string: i.old_string, new_string: i.new_string, replace_all: i.replace_all }),
  },
  MultiEdit: { kind: "edit", keen: "edit_file" },
  NotebookEdit: { kind: "edit" },
  Glob: { kind: "search", keen: "glob" },
  Grep: { kind: "search", keen: "grep" },
  LS: { kind: "read", keen: "list" },
  WebFetch: { kind: "network" },
  WebSearch: { kind: "network" },
};

/** The CLI tool `name` describes, if the table knows it. */
export function cliTool(name: string): CliTool | undefined {
  return Object.hasOwn(CLI_TOOLS, name) ? CLI_TOOLS[name] : undefined;
}

/** Keen's tool name as the CLI's; any other name is passed on as the CLI's own. */
export function cliToolName(name: string): string {
  return Object.entries(CLI_TOOLS).find(([, tool]) => tool.keen === name)?.[0] ?? name;
}

/** How a call of the CLI's tool `name` reads: its kind, the command or the file it touches. */
export function cliCallView(name: string, input: unknown): CallView {
  const kind = cliTool(name)?.kind ?? "other";
  const args = input && typeof input === "object" && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
  const str = (key: string) => (typeof args[key] === "string" && args[key] ? (args[key] as string) : undefined);
  const path = str("file_path") ?? str("notebook_path");
  const subject = kind === "exec" ? str("command") : (path ?? str("pattern") ?? str("url") ?? str("query") ?? str("path"));
  return {
    tool_kind: kind, mutates: kind !== "read" && kind !== "search",
    title: kind === "exec" && subject ? subject : subject ? `${name} ${subject}` : name,
    // The CLI's paths are absolute.
    locations: path?.startsWith("/") ? [{ path }] : [],
  };
}
