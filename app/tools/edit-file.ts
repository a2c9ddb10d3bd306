import { readFileSync, statSync, writeFileSync } from "node:fs";
import * as z from "zod";
import { defineTool, fail, pathHelpers, toolInput } from "./define.js";
import type { Tool, ToolContext } from "./tool.js";
import { changeDetails } from "./write-file.js";

const schema = toolInput(z.object({
  path: z.string().min(1).describe("File path, absolute or relative to the working directory."),
  old_string: z.string().min(1).describe("The exact text to replace, including whitespace and indentation."),
  new_string: z.string().describe("The replacement text."),
  replace_all: z.boolean().optional().describe("Replace every occurrence instead of exactly one (default false)."),
}));

const description = `Replace exact text in an existing file. old_string must match the file exactly (whitespace and indentation included) and, unless replace_all is true, exactly once: include enough surrounding lines to make it unique.
Read the file first to copy the text exactly. Do not include read_file's line-number prefixes. To create a file use write_file.`;

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) count++;
  return count;
}

/** The `edit_file` tool. */
export function createEditFileTool(ctx: ToolContext): Tool {
  const paths = pathHelpers(ctx);
  return defineTool("edit_file", description, schema, async (input) => {
    if (input.old_string === input.new_string) return fail("old_string and new_string are identical; nothing would change.");
    const decision = ctx.guard.checkWrite(paths.resolve(input.path));
    if (!decision.ok) return fail(decision.reason);
    const abs = decision.path;
    const shown = paths.show(abs);
    const stat = statSync(abs, { throwIfNoEntry: false });
    if (!stat) return fail(`File not found: ${shown}. To create a file use write_file.`);
    if (stat.isDirectory()) return fail(`${shown} is a directory; give a file path.`);
    if (!stat.isFile()) return fail(`${shown} is not a regular file.`);
    const raw = readFileSync(abs);
    if (raw.subarray(0, 8192).includes(0)) return fail(`${shown} is a binary file; edit_file only edits text.`);
    const before = raw.toString("utf8");

    let oldString = input.old_string;
    let newString = input.new_string;
    let count = countOccurrences(before, oldString);
    // Models write \n; a file with CRLF line endings would otherwise never match.
    if (count === 0 && before.includes("\r\n") && oldString.includes("\n") && !oldString.includes("\r\n")) {
      oldString = oldString.replace(/\n/g, "\r\n");
      newString = newString.replace(/\r?\n/g, "\r\n");
      count = countOccurrences(before, oldString);
    }
    if (count === 0) {
      return fail(`old_string was not found in ${shown}. It must match exactly, including whitespace and indentation; read the file again and copy the text.`);
    }
    if (count > 1 && !input.replace_all) {
      return fail(`old_string matches ${count} places in ${shown}; add surrounding lines to make it unique, or set replace_all to true.`);
    }
    // split/join and slicing, not String.replace: `$&` and friends in new_string must stay literal.
    let after: string;
    if (input.replace_all) {
      after = before.split(oldString).join(newString);
    } else {
      const at = before.indexOf(oldString);
      after = before.slice(0, at) + newString + before.slice(at + oldString.length);
    }
    writeFileSync(abs, after);
    const what = count === 1 ? "1 occurrence" : `${count} occurrences`;
    return { content: `Edited ${shown}: replaced ${what}.`, is_error: false, details: changeDetails(abs, shown, before, after) };
  });
}
