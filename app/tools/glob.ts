import { statSync } from "node:fs";
import * as z from "zod";
import { defineTool, fail, pathHelpers, toolInput } from "./define.js";
import type { Tool, ToolContext } from "./tool.js";

/** At most this many paths come back. */
export const GLOB_MAX_RESULTS = 500;

const schema = toolInput(z.object({
  pattern: z.string().min(1).describe('Glob pattern, e.g. "**/*.ts" or "src/**/test_*.py".'),
  path: z.string().optional().describe("Directory to search from (default: the working directory)."),
}));

const description = `Find files by name with a glob pattern (** crosses directories; "*.ts" matches only the top level, "**/*.ts" all levels).
Returns file paths relative to the working directory, most recently modified first, at most ${GLOB_MAX_RESULTS}.
Skips gitignored files, node_modules, .git and secrets; names starting with a dot match only when the pattern spells the dot (".github/**").`;

/** The `glob` tool. Ordered by mtime, newest first: under the cap, the files being worked on survive. */
export function createGlobTool(ctx: ToolContext): Tool {
  const paths = pathHelpers(ctx);
  return defineTool("glob", description, schema, async (input, call) => {
    const decision = ctx.guard.checkRead(paths.resolve(input.path ?? "."));
    if (!decision.ok) return fail(decision.reason);
    const root = decision.path;
    const stat = statSync(root, { throwIfNoEntry: false });
    if (!stat) return fail(`Path not found: ${paths.show(root)}`);
    if (!stat.isDirectory()) return fail(`${paths.show(root)} is not a directory; path must be a directory to search from.`);

    // Loaded on first use: tinyglobby (with fdir and picomatch) costs ~15 ms at start-up.
    const { glob } = await import("tinyglobby");
    const found = await glob(input.pattern, {
      cwd: root, absolute: true, dot: false, followSymbolicLinks: false, signal: call.signal,
      ignore: ["**/.git/**", "**/node_modules/**"],
    });
    const files: { path: string; mtime: number }[] = [];
    for (const path of found) {
      if (ctx.guard.isIgnored(path) || !ctx.guard.checkRead(path).ok) continue;
      files.push({ path, mtime: statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? 0 });
    }
    files.sort((a, b) => b.mtime - a.mtime || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

    const details = { pattern: input.pattern, count: files.length, truncated: files.length > GLOB_MAX_RESULTS };
    if (files.length === 0) return { content: "No files matched.", is_error: false, details };
    let content = files.slice(0, GLOB_MAX_RESULTS).map((f) => paths.show(f.path)).join("\n");
    if (details.truncated) {
      content += `\n\n[Showing ${GLOB_MAX_RESULTS} of ${files.length} files, most recently modified first. Narrow the pattern or path.]`;
    }
    return { content, is_error: false, details };
  });
}
