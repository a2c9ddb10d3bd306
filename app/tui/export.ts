import { existsSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";
import type { TuiController } from "./controller.js";
import { lineCount } from "./editor.js";

/*
 * `/export [file]`: the session's stored transcript as markdown in a file —
 * the text `keen sessions show` prints. The default name carries the session
 * id and goes in the session's directory; an existing file is overwritten
 * only when the same `/export` is repeated right after the warning.
 */

/** The file a first `/export` refused to overwrite: the next `/export` of it confirms. */
const armed = new WeakMap<TuiController, string>();

/** Forgets a pending overwrite confirmation (any other command ran in between). */
export function disarmExport(c: TuiController): void {
  armed.delete(c);
}

export async function exportTranscript(c: TuiController, arg: string): Promise<void> {
  const id = c.view.sessionId;
  if (!id) return c.note("nothing to export yet: the session starts with the first prompt");
  if (!c.deps.transcriptMarkdown) return c.note("/export is not available here");
  const name = arg.replace(/^~(?=\/|$)/, homedir()) || `keen-${id}.md`;
  const file = resolve(c.view.cwd, name);
  const confirmed = armed.get(c) === file;
  armed.delete(c);
  if (existsSync(file) && !confirmed) {
    armed.set(c, file);
    return c.notice(`${file} exists: /export${arg ? ` ${arg}` : ""} again, right now, overwrites it.`, "warning");
  }
  try {
    const text = await c.deps.transcriptMarkdown(id);
    // "wx" unless confirmed: a file that appeared since the check is not overwritten either.
    writeFileSync(file, text, { flag: confirmed ? "w" : "wx", mode: 0o600 });
    c.notice(`Exported the transcript (${lineCount(text)} lines) to ${file}.`, "info");
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    c.notice(`/export: ${e.code === "EEXIST" ? `${file} exists` : e.code ? `${e.code}: ${file}` : String(e.message ?? error)}`, "error");
  }
}
