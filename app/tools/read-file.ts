import { closeSync } from "node:fs";
import * as z from "zod";
import { openGuarded, readAll, type GuardedFile } from "../permissions/guarded-open.js";
import { defineTool, fail, pathHelpers, toolInput, locationOf, strArg } from "./define.js";
import { clientFailure } from "./file-source.js";
import { describeImage, ImageError, imageTypeOfPath, MAX_IMAGE_EDGE, prepareImage } from "./image.js";
import type { Tool, ToolContext, ToolResult } from "./tool.js";

/** Files larger than this are refused outright. */
export const READ_MAX_FILE_BYTES = 10 * 1024 * 1024;
/** At most this many lines, and this many bytes of them, come back per call. */
export const READ_MAX_LINES = 2000;
export const READ_MAX_BYTES = 100 * 1024;
// Longer lines (minified code, data) are shortened so one line cannot eat the budget.
const MAX_LINE_CHARS = 2000;
const BINARY_SNIFF_BYTES = 8192;

const schema = toolInput("read_file", () => z.object({
  path: z.string().min(1).describe("File path, absolute or relative to the working directory."),
  offset: z.number().int().min(1).optional().describe("First line to read, 1-based (default 1)."),
  limit: z.number().int().min(1).optional().describe(`Number of lines to read (default and max ${READ_MAX_LINES}).`),
}));

const description = `Read a text file, or look at an image. Returns lines numbered like \`cat -n\` (number, tab, text).
An image (.png, .jpg, .jpeg, .gif, .webp) comes back as the image itself, downscaled to at most ${MAX_IMAGE_EDGE} pixels a side.
At most ${READ_MAX_LINES} lines or ${READ_MAX_BYTES / 1024} KB per call; use offset and limit to read further. Lines over ${MAX_LINE_CHARS} characters are shortened.
Refuses binary files, files over ${READ_MAX_FILE_BYTES / 1024 / 1024} MB, and secrets (.env, keys, credentials). For directories use list.`;

const binary = (shown: string) => fail(`${shown} is a binary file (it contains NUL bytes); read_file only reads text.`);

/** The `read_file` tool; through `ctx.files` when the client reads for Keen (after the guard's checks on the disk's file). */
export function createReadFileTool(ctx: ToolContext): Tool {
  const paths = pathHelpers(ctx);
  return defineTool("read_file", description, schema, async (input, call) => {
    const file = openGuarded(ctx.guard, paths.resolve(input.path), "read");
    if (!file.ok) {
      const shown = paths.show(file.path);
      if (file.kind === "missing") return fail(`File not found: ${shown}`);
      if (file.kind === "directory") return fail(`${shown} is a directory; use the list tool to see its entries.`);
      if (file.kind === "not-file") return fail(`${shown} is not a regular file.`);
      return fail(file.reason);
    }
    const abs = file.path;
    const shown = paths.show(abs);
    if (imageTypeOfPath(abs)) return readImage(file, shown);
    let text = "";
    try {
      if (file.stat.size > READ_MAX_FILE_BYTES) {
        const mb = (file.stat.size / 1024 / 1024).toFixed(1);
        return fail(`${shown} is ${mb} MB; read_file refuses files over ${READ_MAX_FILE_BYTES / 1024 / 1024} MB. Use grep to find what you need, or bash with head/tail/sed -n.`);
      }
      if (!ctx.files?.readText) {
        const buf = readAll(file.fd, READ_MAX_FILE_BYTES);
        if (buf.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return binary(shown);
        text = buf.toString("utf8");
      }
    } finally {
      closeSync(file.fd);
    }
    if (ctx.files?.readText) {
      // The editor's buffer: what the user sees, saved or not. The checks above were on the disk's file.
      try {
        text = await ctx.files.readText(abs, call.signal);
      } catch (error) {
        return fail(clientFailure("read", shown, error));
      }
      if (text.slice(0, BINARY_SNIFF_BYTES).includes("\0")) return binary(shown);
      if (Buffer.byteLength(text) > READ_MAX_FILE_BYTES) return fail(`${shown} is over ${READ_MAX_FILE_BYTES / 1024 / 1024} MB in the editor; read_file refuses files that large.`);
    }
    const details = { path: abs, total_lines: 0, start_line: 0, end_line: 0, truncated: false };
    if (text.length === 0) return { content: `(${shown} is empty)`, is_error: false, details };

    const lines = text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    const total = lines.length;
    const start = input.offset ?? 1;
    if (start > total) return fail(`offset ${start} is past the end of ${shown}, which has ${total} lines.`);
    const wanted = Math.min(input.limit ?? READ_MAX_LINES, READ_MAX_LINES);

    const out: string[] = [];
    let bytes = 0;
    let line = start;
    for (; line < start + wanted && line <= total; line++) {
      let text = lines[line - 1]!.replace(/\r$/, "");
      if (text.length > MAX_LINE_CHARS) text = `${text.slice(0, MAX_LINE_CHARS)}... [line shortened: ${text.length} characters]`;
      const rendered = `${String(line).padStart(6)}\t${text}`;
      bytes += Buffer.byteLength(rendered) + 1;
      // Always show at least one line, so a read makes progress.
      if (bytes > READ_MAX_BYTES && out.length > 0) break;
      out.push(rendered);
    }
    const end = line - 1;
    const truncated = end < total;
    let content = out.join("\n");
    if (truncated) {
      content += `\n\n[Showing lines ${start}-${end} of ${total}. Use offset=${end + 1} to read more.]`;
    }
    return { content, is_error: false, details: { ...details, total_lines: total, start_line: start, end_line: end, truncated } };
  }, {
    kind: "read",
    describe: (args) => ({ title: `Read ${strArg(args, "path") ?? "a file"}${lineRange(args)}`, locations: locationOf(paths, strArg(args, "path"), args.offset) }),
  });
}

/** `:10-29` for a call that reads part of a file, as editors write a range; ` from line 10` with no limit; nothing for the whole file. */
function lineRange(args: Record<string, unknown>): string {
  const whole = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 1;
  const start = whole(args.offset) ? args.offset : 1;
  if (whole(args.limit)) return `:${start}-${start + args.limit - 1}`;
  return start > 1 ? ` from line ${start}` : "";
}

/**
 * An image file as an image for the model, read from the disk even when an editor reads text for
 * Keen (an editor's buffer is text). A model that takes no images gets the provider's note instead.
 */
async function readImage(file: GuardedFile, shown: string): Promise<ToolResult> {
  try {
    if (file.stat.size > READ_MAX_FILE_BYTES) {
      return fail(`${shown} is ${(file.stat.size / 1024 / 1024).toFixed(1)} MB; read_file refuses images over ${READ_MAX_FILE_BYTES / 1024 / 1024} MB.`);
    }
    const image = await prepareImage(readAll(file.fd, READ_MAX_FILE_BYTES), shown);
    return {
      content: `Image ${describeImage(shown, image)}, attached.`,
      is_error: false,
      details: { path: file.path, image: { media_type: image.media_type, width: image.width, height: image.height, bytes: image.bytes, ...(image.resized_from ? { resized_from: image.resized_from } : {}) } },
      images: [{ media_type: image.media_type, data: image.data }],
    };
  } catch (error) {
    if (error instanceof ImageError) return fail(`${error.message}.`);
    throw error;
  } finally {
    closeSync(file.fd);
  }
}
