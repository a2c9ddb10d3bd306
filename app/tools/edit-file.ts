import { closeSync } from "node:fs";
import * as z from "zod";
import { openGuarded, readAll, replaceContent, type GuardedFile } from "../permissions/guarded-open.js";
import { defineTool, fail, pathHelpers, toolInput, type InputOf, type PathHelpers, locationOf, strArg } from "./define.js";
import { changeDetails, decodeExact, isCrlf, markerRefusal, toCrlf } from "./file-text.js";
import { clientFailure, currentText, writeSource, type FileText } from "./file-source.js";
import type { Tool, ToolContext, ToolPreview, ToolResult } from "./tool.js";

const schema = toolInput("edit_file", () => z.object({
  path: z.string().min(1).describe("File path, absolute or relative to the working directory."),
  old_string: z.string().min(1).describe("The exact text to replace, including whitespace and indentation."),
  new_string: z.string().describe("The replacement text."),
  replace_all: z.boolean().optional().describe("Replace every occurrence instead of exactly one (default false)."),
}));
type EditInput = InputOf<typeof schema>;

const description = `Replace exact text in an existing file. old_string must match the file exactly (whitespace and indentation included) and, unless replace_all is true, exactly once: include enough surrounding lines to make it unique.
Read the file first to copy the text exactly. Do not include read_file's line-number prefixes. To create a file use write_file.
Only the replaced text changes: line endings (CRLF) and every other byte stay as they were.`;

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) count++;
  return count;
}

const NON_ASCII = /[^\x00-\x7f]/;

/** The file's new text (and bytes) after the edit, or why the edit cannot be made. Only the replaced spans change. */
export function planEdit(current: FileText, input: EditInput, shown: string): { data: Buffer; before: string; after: string; count: number } | string {
  if (input.old_string === input.new_string) return "old_string and new_string are identical; nothing would change.";
  const { text: before, encoding } = current;
  // NUL is one byte and one character in both encodings, so this sniffs the same bytes as before decoding.
  if (before.slice(0, 8192).includes("\0")) return `${shown} is a binary file; edit_file only edits text.`;
  // In latin1 text one character is one byte, so ASCII old/new strings edit the bytes exactly;
  // other characters would have to be encoded somehow, and any choice could be wrong.
  if (encoding !== "utf8" && (NON_ASCII.test(input.old_string) || NON_ASCII.test(input.new_string))) {
    const which = NON_ASCII.test(input.old_string) ? "old_string" : "new_string";
    return `${shown} is not valid UTF-8 (a legacy encoding such as Latin-1); edit_file changes such a file byte for byte and can only match and insert ASCII text, but ${which} has other characters (read_file shows the file's undecodable bytes as \uFFFD). Change only ASCII text around them, or convert the file first (bash: iconv).`;
  }
  let oldString = input.old_string;
  let newString = input.new_string;
  let count: number;
  if (isCrlf(before)) {
    // Models write \n; in a CRLF file both sides become CRLF, so the file keeps one style.
    oldString = toCrlf(oldString);
    newString = toCrlf(newString);
    count = countOccurrences(before, oldString);
  } else {
    count = countOccurrences(before, oldString);
    // A file with mixed endings: try CRLF only when \n alone matched nothing.
    if (count === 0 && before.includes("\r\n") && oldString.includes("\n") && !oldString.includes("\r\n")) {
      oldString = toCrlf(oldString);
      newString = toCrlf(newString);
      count = countOccurrences(before, oldString);
    }
  }
  if (count === 0) {
    return `old_string was not found in ${shown}. It must match exactly, including whitespace and indentation; read the file again and copy the text.`;
  }
  if (count > 1 && !input.replace_all) {
    return `old_string matches ${count} places in ${shown}; add surrounding lines to make it unique, or set replace_all to true.`;
  }
  // split/join and slicing, not String.replace: `$&` and friends in new_string must stay literal.
  let after: string;
  if (input.replace_all) {
    after = before.split(oldString).join(newString);
  } else {
    const at = before.indexOf(oldString);
    after = before.slice(0, at) + newString + before.slice(at + oldString.length);
  }
  return { data: Buffer.from(after, encoding), before, after, count };
}

/** Opens the file to edit; the failure worded for the model. */
function open(ctx: ToolContext, paths: PathHelpers, input: EditInput, mode: "write" | "preview"): GuardedFile | { ok: false; reason: string } {
  const opened = openGuarded(ctx.guard, paths.resolve(input.path), mode);
  if (opened.ok) return opened;
  const shown = paths.show(opened.path);
  if (opened.kind === "missing") return { ok: false, reason: `File not found: ${shown}. To create a file use write_file.` };
  if (opened.kind === "directory") return { ok: false, reason: `${shown} is a directory; give a file path.` };
  if (opened.kind === "not-file") return { ok: false, reason: `${shown} is not a regular file.` };
  return { ok: false, reason: opened.reason };
}

/** The `edit_file` tool. */
export function createEditFileTool(ctx: ToolContext): Tool {
  const paths = pathHelpers(ctx);
  const tool = defineTool("edit_file", description, schema, async (input, call) => {
    if (input.old_string === input.new_string) return fail("old_string and new_string are identical; nothing would change.");
    const marker = markerRefusal({ old_string: input.old_string, new_string: input.new_string });
    if (marker) return fail(marker);
    const files = ctx.files;
    if (files?.writeText) return editThroughClient(ctx, paths, input, files.writeText.bind(files), call.signal);
    const file = open(ctx, paths, input, "write");
    if (!file.ok) return fail(file.reason);
    try {
      const shown = paths.show(file.path);
      const planned = planEdit(decodeExact(readAll(file.fd)), input, shown);
      if (typeof planned === "string") return fail(planned);
      replaceContent(file.fd, planned.data);
      return edited(file.path, shown, planned);
    } finally {
      closeSync(file.fd);
    }
  }, {
    kind: "edit",
    describe: (args) => ({ title: `Edit ${strArg(args, "path") ?? "a file"}`, locations: locationOf(paths, strArg(args, "path")) }),
  });
  return { ...tool, preview: (input) => previewEdit(ctx, paths, input) };
}

function edited(path: string, shown: string, planned: { before: string; after: string; count: number }): ToolResult {
  const what = planned.count === 1 ? "1 occurrence" : `${planned.count} occurrences`;
  return { content: `Edited ${shown}: replaced ${what}.`, is_error: false, details: changeDetails(path, shown, planned.before, planned.after) };
}

/**
 * edit_file in the editor: the guard's checks on the disk's file (as for a preview), the text
 * from the editor when it reads for Keen, the edited text written by it.
 */
async function editThroughClient(
  ctx: ToolContext, paths: PathHelpers, input: EditInput, writeText: (path: string, text: string, signal?: AbortSignal) => Promise<void>, signal: AbortSignal,
): Promise<ToolResult> {
  const file = open(ctx, paths, input, "preview");
  if (!file.ok) return fail(file.reason);
  const shown = paths.show(file.path);
  let current: FileText;
  try {
    current = await currentText(ctx.files, file, signal);
  } catch (error) {
    return fail(clientFailure("read", shown, error));
  } finally {
    closeSync(file.fd);
  }
  // Read from the disk (the client only writes): its text would reach the editor re-encoded, changing every other non-ASCII byte.
  if (current.encoding !== "utf8") return fail(`${shown} is not valid UTF-8; edit_file cannot edit it through the editor without changing its other bytes. Convert it first (bash: iconv).`);
  const planned = planEdit(current, input, shown);
  if (typeof planned === "string") return fail(planned);
  try {
    await writeText(file.path, planned.after, signal);
  } catch (error) {
    return fail(clientFailure("write", shown, error));
  }
  return edited(file.path, shown, planned);
}

/** The diff edit_file would make, or why it would fail; nothing is written. */
async function previewEdit(ctx: ToolContext, paths: PathHelpers, raw: unknown): Promise<ToolPreview | string> {
  const parsed = schema.get().safeParse(raw);
  if (!parsed.success) return `Invalid input for edit_file:\n${z.prettifyError(parsed.error)}`;
  const input = parsed.data;
  const marker = markerRefusal({ old_string: input.old_string, new_string: input.new_string });
  if (marker) return marker;
  const file = open(ctx, paths, input, "preview");
  if (!file.ok) return file.reason;
  try {
    const shown = paths.show(file.path);
    const planned = planEdit(await currentText(writeSource(ctx.files), file), input, shown);
    return typeof planned === "string" ? planned : changeDetails(file.path, shown, planned.before, planned.after);
  } catch (error) {
    return `Cannot read ${paths.show(file.path)}: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    closeSync(file.fd);
  }
}
