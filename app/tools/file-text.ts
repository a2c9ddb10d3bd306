import { isUtf8 } from "node:buffer";
import { createPatch } from "diff";
import { REDACTED } from "../permissions/redact.js";

// A diff of huge or very different files can take long (O(N*D)); past this the UI gets no diff.
const DIFF_TIMEOUT_MS = 2000;

/** A unified diff for the UI's diff pane; '' when it would take too long to compute. */
export function unifiedDiff(shownPath: string, before: string, after: string): string {
  return createPatch(shownPath, before, after, undefined, undefined, { timeout: DIFF_TIMEOUT_MS }) ?? "";
}

// ACP clients show a change as the whole old and new text; past this (old + new) they get only the unified diff.
const CHANGE_TEXT_MAX_CHARS = 128 * 1024;

/** A write's or edit's change: the unified diff, plus the whole old (null: a new file) and new text when small enough. */
export type FileChange = { path: string; diff: string; old_text?: string | null; new_text?: string };

/** The details of a write or edit (and the preview its permission request shows): see FileChange. */
export function changeDetails(path: string, shown: string, before: string | null, after: string): FileChange {
  const details = { path, diff: unifiedDiff(shown, before ?? "", after) };
  return (before ?? "").length + after.length > CHANGE_TEXT_MAX_CHARS ? details : { ...details, old_text: before, new_text: after };
}

/**
 * A file's bytes as text, losslessly: UTF-8 when they are valid UTF-8, else latin1 (one
 * character per byte), so that turning the text back into bytes with the same encoding
 * gives every untouched byte back exactly. Decoding invalid UTF-8 as UTF-8 would turn
 * those bytes into U+FFFD and write that back.
 */
export function decodeExact(raw: Buffer): { text: string; encoding: "utf8" | "latin1" } {
  return isUtf8(raw) ? { text: raw.toString("utf8"), encoding: "utf8" } : { text: raw.toString("latin1"), encoding: "latin1" };
}

/** True when every line break is CRLF (and there is at least one). */
export function isCrlf(text: string): boolean {
  return text.includes("\r\n") && !/(^|[^\r])\n/.test(text);
}

/** `\n` (not already part of `\r\n`) turned into `\r\n`. */
export function toCrlf(text: string): string {
  return text.replace(/\r?\n/g, "\r\n");
}

/**
 * Why a write must not happen because text the model sent holds the redaction marker, or
 * undefined. The marker stands where Keen hid a secret from the model; writing it back
 * would replace the user's real key with it.
 */
export function markerRefusal(fields: Record<string, string | undefined>): string | undefined {
  const named = Object.entries(fields).filter(([, v]) => v?.includes(REDACTED)).map(([k]) => k);
  if (named.length === 0) return undefined;
  return `Refused: ${named.join(" and ")} ${named.length > 1 ? "contain" : "contains"} ${REDACTED}, the marker Keen puts where it hid a secret from you; the file holds a real secret there, and writing the marker would destroy it. Edit around it: leave that text out of the change.`;
}
