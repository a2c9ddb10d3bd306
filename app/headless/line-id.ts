import type { CommandId } from "../../protocol/commands.js";

/**
 * The top-level `"id"` of a command line known only by its first bytes (a line too long to keep whole), so its
 * refusal can still name the command; undefined when the head ends before the id's value does, or holds none.
 * A small JSON scanner rather than a regex: an `"id"` key inside a nested object, or the text `"id":` inside a
 * string, is not the command's.
 */
export function leadingId(head: string): CommandId | undefined {
  let depth = 0;
  let at = 0;
  // At depth 1, the string just read was a key (a ':' follows it) or a value.
  let expectKey = false;
  let key: string | undefined;
  while (at < head.length) {
    const c = head[at]!;
    if (c === '"') {
      const end = stringEnd(head, at);
      if (end < 0) return undefined;
      if (depth === 1) {
        const text = head.slice(at, end + 1);
        if (expectKey) key = JSON.parse(text) as string;
        else if (key === "id") return JSON.parse(text) as string;
      }
      at = end + 1;
      continue;
    }
    if (c === "{" || c === "[") {
      depth++;
      if (depth === 1) expectKey = c === "{";
      if (depth === 1 && c === "[") return undefined;
    } else if (c === "}" || c === "]") {
      depth--;
      if (depth <= 0) return undefined;
    } else if (depth === 1 && c === ",") {
      expectKey = true;
      key = undefined;
    } else if (depth === 1 && c === ":") {
      expectKey = false;
      if (key === "id") {
        const number = /^\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)[\s,}]/.exec(head.slice(at + 1));
        if (number) return Number(number[1]);
      }
    }
    at++;
  }
  return undefined;
}

/** The index of the quote that closes the string opened at `start`, or -1 when the head ends first. */
function stringEnd(text: string, start: number): number {
  for (let at = start + 1; at < text.length; at++) {
    if (text[at] === "\\") at++;
    else if (text[at] === '"') return at;
  }
  return -1;
}
