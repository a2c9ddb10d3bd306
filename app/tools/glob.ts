import { statSync } from "node:fs";
import * as z from "zod";
import { defineTool, fail, pathHelpers, toolInput, strArg } from "./define.js";
import { runInSearchWorker, SEARCH_BUDGET_MS } from "./search-runner.js";
import type { Tool, ToolContext } from "./tool.js";

/** At most this many paths come back. */
export const GLOB_MAX_RESULTS = 500;

const schema = toolInput("glob", () => z.object({
  pattern: z.string().min(1).describe('Glob pattern, e.g. "**/*.ts" or "src/**/test_*.py".'),
  path: z.string().optional().describe("Directory to search from (default: the working directory)."),
}));

const description = (budgetMs: number) => `Find files by name with a glob pattern (** crosses directories; "*.ts" matches only the top level, "**/*.ts" all levels).
Returns file paths relative to the working directory, most recently modified first, at most ${GLOB_MAX_RESULTS}.
Skips gitignored files, node_modules, .git and secrets; names starting with a dot match only when the pattern spells the dot (".github/**").
Each search may take ${budgetMs / 1000}s at most; then it is stopped with an error.`;

/** Options for createGlobTool: `budgetMs` is each call's time budget (default: the context's `searchBudgetMs`, else SEARCH_BUDGET_MS). */
export interface GlobToolOptions {
  budgetMs?: number;
}

/** The `glob` tool. Ordered by mtime, newest first: under the cap, the files being worked on survive. */
export function createGlobTool(ctx: ToolContext, options: GlobToolOptions = {}): Tool {
  const paths = pathHelpers(ctx);
  const budgetMs = options.budgetMs ?? ctx.searchBudgetMs ?? SEARCH_BUDGET_MS;
  return defineTool("glob", description(budgetMs), schema, async (input, call) => {
    const decision = ctx.guard.checkRead(paths.resolve(input.path ?? "."));
    if (!decision.ok) return fail(decision.reason);
    const root = decision.path;
    const stat = statSync(root, { throwIfNoEntry: false });
    if (!stat) return fail(`Path not found: ${paths.show(root)}`);
    if (!stat.isDirectory()) return fail(`${paths.show(root)} is not a directory; path must be a directory to search from.`);

    // In the search worker: the pattern becomes a backtracking regex that a crafted pattern and a long name can stall.
    const walked = await runInSearchWorker(
      { type: "glob", pattern: input.pattern, cwd: root, dot: false, ignore: ["**/.git/**", "**/node_modules/**"] },
      { deadline: Date.now() + budgetMs, signal: call.signal },
    );
    if ("stopped" in walked) {
      if (walked.stopped === "abort") return fail("The search was interrupted.");
      return fail(`glob stopped after ${budgetMs / 1000}s, its time budget: the pattern may be too costly to match ` +
        "(many * in one name) or the tree too large. Simplify the pattern or narrow path.");
    }
    if ("error" in walked) return fail(walked.error);
    const files: { path: string; mtime: number }[] = [];
    for (const path of walked.value.files) {
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
  }, {
    kind: "search",
    describe: (args) => {
      const path = strArg(args, "path");
      return { title: `Find ${strArg(args, "pattern") ?? "files"}${path ? ` in ${path}` : ""}`, locations: [] };
    },
  });
}
