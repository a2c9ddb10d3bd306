import { closeSync } from "node:fs";
import * as z from "zod";
import { openGuarded, readAll, replaceContent, type GuardedFile } from "../permissions/guarded-open.js";
import { countLines, defineTool, fail, pathHelpers, plural, toolInput, type InputOf, type PathHelpers, locationOf, strArg } from "./define.js";
import { changeDetails, decodeExact, isCrlf, markerRefusal, toCrlf } from "./file-text.js";
import { clientFailure, currentText, writeSource, type FileText } from "./file-source.js";
import type { Tool, ToolContext, ToolPreview, ToolResult } from "./tool.js";

export { unifiedDiff } from "./file-text.js";

const schema = toolInput("write_file", () => z.object({
  path: z.string().min(1).describe("File path, absolute or relative to the working directory."),
  content: z.string().describe("The complete new content of the file."),
  overwrite_non_utf8: z.boolean().optional().describe("Replace an existing file that is not valid UTF-8 (default false: refused, since its other bytes would be lost)."),
}));
type WriteInput = InputOf<typeof schema>;

const description = `Create a file, or replace a whole file, with the given content. Parent directories are created.
Only inside the workspace; secrets (.env, keys, credentials) are refused. An existing file with CRLF line endings keeps them. To change part of an existing file, prefer edit_file.`;

/** What the write would do, from the file's current text (undefined: it does not exist). */
function plan(input: WriteInput, shown: string, current: FileText | undefined): { data: Buffer; before: string; after: string } | string {
  if (!current) return { data: Buffer.from(input.content), before: "", after: input.content };
  const { text: before, encoding } = current;
  if (encoding !== "utf8" && !input.overwrite_non_utf8) {
    return `${shown} exists and is not valid UTF-8 (a legacy encoding such as Latin-1, or binary); write_file would replace bytes it cannot show you. Use edit_file for ASCII changes, or set overwrite_non_utf8 to true to replace the whole file.`;
  }
  // The model reads CRLF files as plain lines (read_file drops the \r) and writes \n back.
  const after = isCrlf(before) && !input.content.includes("\r") ? toCrlf(input.content) : input.content;
  return { data: Buffer.from(after), before, after };
}

/** Opens (or, with `create`, creates) the target; the failure worded for the model. */
function open(ctx: ToolContext, paths: PathHelpers, input: WriteInput, mode: "write" | "preview"): GuardedFile | { ok: false; missing: boolean; path: string; reason: string } {
  const opened = openGuarded(ctx.guard, paths.resolve(input.path), mode, { create: true });
  if (opened.ok) return opened;
  const shown = paths.show(opened.path);
  const failure = (reason: string) => ({ ok: false as const, missing: opened.kind === "missing", path: opened.path, reason });
  if (opened.kind === "directory") return failure(`${shown} is a directory; give a file path.`);
  if (opened.kind === "not-file") return failure(`${shown} is not a regular file.`);
  return failure(opened.reason);
}

/** The `write_file` tool. */
export function createWriteFileTool(ctx: ToolContext): Tool {
  const paths = pathHelpers(ctx);
  const tool = defineTool("write_file", description, schema, async (input, call) => {
    const marker = markerRefusal({ content: input.content });
    if (marker) return fail(marker);
    const files = ctx.files;
    if (files?.writeText) return writeThroughClient(ctx, paths, input, files.writeText.bind(files), call.signal);
    const file = open(ctx, paths, input, "write");
    if (!file.ok) return fail(file.reason);
    try {
      const shown = paths.show(file.path);
      const planned = plan(input, shown, file.created ? undefined : decodeExact(readAll(file.fd)));
      if (typeof planned === "string") return fail(planned);
      replaceContent(file.fd, planned.data);
      return written(file.path, shown, file.created, planned);
    } finally {
      closeSync(file.fd);
    }
  }, {
    kind: "edit",
    describe: (args) => ({ title: `Write ${strArg(args, "path") ?? "a file"}`, locations: locationOf(paths, strArg(args, "path")) }),
  });
  return { ...tool, preview: (input) => previewWrite(ctx, paths, input) };
}

function written(path: string, shown: string, created: boolean, planned: { before: string; after: string }): ToolResult {
  const lines = countLines(planned.after);
  const content = created
    ? `Created ${shown} (${plural(lines, "line")}).`
    : `Overwrote ${shown} (${plural(countLines(planned.before), "line")} before, ${lines} now).`;
  return { content, is_error: false, details: changeDetails(path, shown, created ? null : planned.before, planned.after) };
}

/**
 * write_file in the editor: the guard's checks on the disk's path (as for a preview, nothing
 * created), the old text from the editor when it reads for Keen, the new text written by it.
 * A file missing on disk is a new file.
 */
async function writeThroughClient(
  ctx: ToolContext, paths: PathHelpers, input: WriteInput, writeText: (path: string, text: string, signal?: AbortSignal) => Promise<void>, signal: AbortSignal,
): Promise<ToolResult> {
  const file = open(ctx, paths, input, "preview");
  if (!file.ok && !file.missing) return fail(file.reason);
  const shown = paths.show(file.path);
  let current: FileText | undefined;
  try {
    current = file.ok ? await currentText(ctx.files, file, signal) : undefined;
  } catch (error) {
    return fail(clientFailure("read", shown, error));
  } finally {
    if (file.ok) closeSync(file.fd);
  }
  const planned = plan(input, shown, current);
  if (typeof planned === "string") return fail(planned);
  try {
    await writeText(file.path, planned.after, signal);
  } catch (error) {
    return fail(clientFailure("write", shown, error));
  }
  return written(file.path, shown, !file.ok, planned);
}

/** The diff write_file would make, or why it would fail; nothing is created or written. */
async function previewWrite(ctx: ToolContext, paths: PathHelpers, raw: unknown): Promise<ToolPreview | string> {
  const parsed = schema.get().safeParse(raw);
  if (!parsed.success) return `Invalid input for write_file:\n${z.prettifyError(parsed.error)}`;
  const input = parsed.data;
  const marker = markerRefusal({ content: input.content });
  if (marker) return marker;
  // A missing file (or directory) is what a write would create: the diff is against ''.
  const file = open(ctx, paths, input, "preview");
  if (!file.ok && !file.missing) return file.reason;
  try {
    const shown = paths.show(file.path);
    const planned = plan(input, shown, file.ok ? await currentText(writeSource(ctx.files), file) : undefined);
    return typeof planned === "string" ? planned : changeDetails(file.path, shown, file.ok ? planned.before : null, planned.after);
  } catch (error) {
    return `Cannot read ${paths.show(file.path)}: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    if (file.ok) closeSync(file.fd);
  }
}
