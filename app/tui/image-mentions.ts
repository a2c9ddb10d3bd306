import { homedir } from "node:os";

/**
 * Images in a TUI prompt: `@path/to/shot.png` (or `@"path with spaces.png"`) sends that file as an image with the
 * prompt, besides leaving the mention in the text; a paste that is nothing but the path of an image (what a terminal
 * pastes for a file dropped on it: maybe quoted, spaces escaped, or a file:// URL) becomes such a mention.
 * The engine reads the file through the filesystem guard and refuses what it cannot send.
 */

const IMAGE = /\.(png|jpe?g|gif|webp)$/i;
const MENTION = /(?:^|\s)@(?:"([^"\n]+)"|(\S+))/g;

/** The `{ path }` images a prompt mentions with `@`, in order, each once (`~/` expanded). */
export function imageMentions(text: string): { path: string }[] {
  const seen = new Set<string>();
  for (const m of text.matchAll(MENTION)) {
    // `look at @shot.png, then…`: punctuation after the name is not part of it.
    const path = m[1] ?? (m[2] ?? "").replace(/[,;:!?)]+$|\.$/, "");
    if (IMAGE.test(path)) seen.add(expandHome(path));
  }
  return [...seen].map((path) => ({ path }));
}

/** The mention to insert for a paste that is only an image file's path; undefined for any other paste. */
export function pastedImageMention(pasted: string): string | undefined {
  let path = pasted.trim();
  if (!path || path.includes("\n")) return undefined;
  if (path.startsWith("file://")) {
    try {
      path = decodeURIComponent(new URL(path).pathname);
    } catch {
      return undefined;
    }
  } else if (/^(['"]).*\1$/.test(path)) path = path.slice(1, -1);
  else path = path.replace(/\\(.)/g, "$1");
  // A path, not a sentence that happens to end in .png.
  if (!IMAGE.test(path) || !/^(\/|~\/|\.{1,2}\/)/.test(path)) return undefined;
  return /\s|"/.test(path) ? (path.includes('"') ? undefined : `@"${path}" `) : `@${path} `;
}

function expandHome(path: string): string {
  return path.startsWith("~/") ? `${homedir()}${path.slice(1)}` : path;
}
