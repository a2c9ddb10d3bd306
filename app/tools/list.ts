import { closeSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod";
import { openGuardedDir } from "../permissions/guarded-open.js";
import { defineTool, fail, pathHelpers, toolInput, locationOf, strArg } from "./define.js";
import type { Tool, ToolContext } from "./tool.js";

/** At most this many entries come back. */
export const LIST_MAX_ENTRIES = 1000;

const schema = toolInput("list", () => z.object({
  path: z.string().optional().describe("Directory to list (default: the working directory)."),
}));

const description = `List the entries of one directory (not recursive): directories first with a trailing /, then files, each group sorted by name.
Dotfiles are shown; gitignored entries and .git are not. At most ${LIST_MAX_ENTRIES} entries. To find files deeper down use glob.`;

/** The `list` tool. Entry names are shown even for secret files: a name is not a secret, and read_file still refuses them. */
export function createListTool(ctx: ToolContext): Tool {
  const paths = pathHelpers(ctx);
  return defineTool("list", description, schema, async (input) => {
    const opened = openGuardedDir(ctx.guard, paths.resolve(input.path ?? "."));
    if (!opened.ok) {
      const shown = paths.show(opened.path);
      if (opened.kind === "missing") return fail(`Directory not found: ${shown}`);
      if (opened.kind === "not-directory") return fail(`${shown} is a file, not a directory; use read_file to read it.`);
      return fail(opened.reason);
    }
    const dir = opened.path;
    const shown = paths.show(dir);
    const dirs: string[] = [];
    const files: string[] = [];
    try {
      // Read through the checked descriptor: a directory swapped in after the check is not listed.
      for (const entry of readdirSync(opened.listPath, { withFileTypes: true })) {
        if (entry.name === ".git") continue;
        const abs = join(dir, entry.name);
        if (ctx.guard.isIgnored(abs)) continue;
        // A symlink to a directory is listed as a directory.
        const isDir = entry.isDirectory() || (entry.isSymbolicLink() && statSync(abs, { throwIfNoEntry: false })?.isDirectory());
        (isDir ? dirs : files).push(isDir ? `${entry.name}/` : entry.name);
      }
    } finally {
      closeSync(opened.fd);
    }
    const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    const entries = [...dirs.sort(byName), ...files.sort(byName)];
    const truncated = entries.length > LIST_MAX_ENTRIES;
    const details = { path: dir, count: entries.length, truncated };
    if (entries.length === 0) return { content: `${shown} is empty (or holds only gitignored entries).`, is_error: false, details };
    let content = entries.slice(0, LIST_MAX_ENTRIES).join("\n");
    if (truncated) content += `\n\n[Showing ${LIST_MAX_ENTRIES} of ${entries.length} entries. Use glob to narrow down.]`;
    return { content, is_error: false, details };
  }, {
    kind: "read",
    describe: (args) => ({ title: `List ${strArg(args, "path") ?? "."}`, locations: locationOf(paths, strArg(args, "path")) }),
  });
}
