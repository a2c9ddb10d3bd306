import { readAll, type GuardedFile } from "../permissions/guarded-open.js";
import { decodeExact } from "./file-text.js";
import type { FileAccess } from "./tool.js";

/** A file's text, and the encoding that turns it back into the same bytes (always utf8 through a client). */
export interface FileText {
  text: string;
  encoding: "utf8" | "latin1";
}

/**
 * The text of a file the guard opened: the client's (its unsaved buffer) when it reads for
 * Keen, else the descriptor's bytes, decoded losslessly. Contract: throws when the client
 * fails; the caller words the message.
 */
export async function currentText(files: FileAccess | undefined, file: GuardedFile, signal?: AbortSignal): Promise<FileText> {
  if (files?.readText) return { text: await files.readText(file.path, signal), encoding: "utf8" };
  return decodeExact(readAll(file.fd));
}

/**
 * Where a write or edit (and its preview) reads the text it changes: from where it will
 * write. A client that only reads for Keen leaves writes on the disk, and an edit planned
 * on the editor's buffer but applied to the disk's bytes would be wrong.
 */
export function writeSource(files: FileAccess | undefined): FileAccess | undefined {
  return files?.writeText ? files : undefined;
}

/** An error's message for the model, naming the editor when the client failed. */
export function clientFailure(what: "read" | "write", shown: string, error: unknown): string {
  return `Cannot ${what} ${shown} through the editor: ${error instanceof Error ? error.message : String(error)}`;
}
