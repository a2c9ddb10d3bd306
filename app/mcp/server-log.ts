import { closeSync, mkdirSync, openSync, renameSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { Redactor } from "../permissions/redact.js";

/** Bytes of one server log before it is rotated to `<server>.log.1` (which replaces the previous one). */
export const MAX_LOG_BYTES = 2 * 1024 * 1024;

/** How a server's stderr is cleaned before it is written. */
export interface LogFilter {
  /** Hides known secrets (the session's: server env and header values, provider keys, secret-looking variables). */
  redactor?: Redactor;
  /** Makes control characters and escape sequences visible (the front end's rule for text from outside). */
  visible?: (text: string) => string;
  maxBytes?: number;
}

/**
 * A stdio server's stderr log: every chunk redacted (a secret split across
 * chunks is still caught) and its control characters made visible, like any
 * other output of Keen; appended to `file`, which is rotated once it would
 * pass `maxBytes`, so one server's log never holds more than twice that.
 * Contract: never throws (a log that cannot be written is dropped, the server runs on).
 */
export function createServerLog(file: string, filter: LogFilter = {}) {
  const maxBytes = filter.maxBytes ?? MAX_LOG_BYTES;
  const redact = filter.redactor?.stream();
  const visible = filter.visible ?? ((text: string) => text);
  let fd: number | undefined;
  let size = 0;
  // A CR at the end of a chunk may be half of a CRLF: held back until the next chunk says.
  let heldCr = false;

  const open = () => {
    try {
      mkdirSync(dirname(file), { recursive: true });
      fd = openSync(file, "a", 0o600);
      size = statSync(file).size;
    } catch {
      fd = undefined;
    }
  };
  const write = (text: string) => {
    if (!text) return;
    const bytes = Buffer.from(text, "utf8");
    if (fd === undefined) return;
    try {
      if (size > 0 && size + bytes.length > maxBytes) {
        closeSync(fd);
        renameSync(file, `${file}.1`);
        fd = openSync(file, "a", 0o600);
        size = 0;
      }
      // One chunk larger than the whole cap keeps only its end.
      const kept = bytes.length > maxBytes ? bytes.subarray(bytes.length - maxBytes) : bytes;
      writeSync(fd, kept);
      size += kept.length;
    } catch {
      // Out of disk, the directory gone: the server's stderr is lost, the session is not.
    }
  };
  const clean = (text: string, last: boolean) => {
    let out = (heldCr ? "\r" : "") + text;
    heldCr = !last && out.endsWith("\r");
    if (heldCr) out = out.slice(0, -1);
    return visible(out);
  };

  open();
  return {
    push(chunk: string): void {
      write(clean(redact ? redact.push(chunk) : chunk, false));
    },
    end(): void {
      write(clean(redact ? redact.end() : "", true));
      if (fd !== undefined) {
        try {
          closeSync(fd);
        } catch {
          // Already closed.
        }
        fd = undefined;
      }
    },
  };
}
