import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { createPatch } from "diff";
import * as z from "zod";
import { countLines, defineTool, fail, pathHelpers, plural, toolInput } from "./define.js";
import type { Tool, ToolContext } from "./tool.js";

const schema = toolInput(z.object({
  path: z.string().min(1).describe("File path, absolute or relative to the working directory."),
  content: z.string().describe("The complete new content of the file."),
}));

const description = `Create a file, or replace a whole file, with the given content. Parent directories are created.
Only inside the workspace; secrets (.env, keys, credentials) are refused. To change part of an existing file, prefer edit_file.`;

// A diff of huge or very different files can take long (O(N*D)); past this the UI gets no diff.
const DIFF_TIMEOUT_MS = 2000;

/** A unified diff for the UI's diff pane; '' when it would take too long to compute. */
export function unifiedDiff(shownPath: string, before: string, after: string): string {
  return createPatch(shownPath, before, after, undefined, undefined, { timeout: DIFF_TIMEOUT_MS }) ?? "";
}

// ACP clients show a change as the whole old and new text; past this (old + new) they get only the unified diff.
const CHANGE_TEXT_MAX_CHARS = 128 * 1024;

/** The details of a write or edit: the unified diff, plus the whole old (null: a new file) and new text when small enough. */
export function changeDetails(path: string, shown: string, before: string | null, after: string): Record<string, unknown> {
  const details = { path, diff: unifiedDiff(shown, before ?? "", after) };
  return (before ?? "").length + after.length > CHANGE_TEXT_MAX_CHARS ? details : { ...details, old_text: before, new_text: after };
}

/** The `write_file` tool. */
export function createWriteFileTool(ctx: ToolContext): Tool {
  const paths = pathHelpers(ctx);
  return defineTool("write_file", description, schema, async (input) => {
    const decision = ctx.guard.checkWrite(paths.resolve(input.path));
    if (!decision.ok) return fail(decision.reason);
    const abs = decision.path;
    const shown = paths.show(abs);
    const stat = statSync(abs, { throwIfNoEntry: false });
    if (stat?.isDirectory()) return fail(`${shown} is a directory; give a file path.`);
    if (stat && !stat.isFile()) return fail(`${shown} is not a regular file.`);
    const before = stat ? readFileSync(abs, "utf8") : "";
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, input.content);
    const lines = countLines(input.content);
    const content = stat
      ? `Overwrote ${shown} (${plural(countLines(before), "line")} before, ${lines} now).`
      : `Created ${shown} (${plural(lines, "line")}).`;
    return { content, is_error: false, details: changeDetails(abs, shown, stat ? before : null, input.content) };
  });
}
