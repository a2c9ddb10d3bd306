/** The most bytes one stdio message may have (64 MiB): past it the server is stopped (see ProcessGroupTransport). */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** What a framer reports. */
export interface LineFramerOptions {
  /** Most bytes of one line, newline excluded. */
  maxBytes: number;
  /** One complete line (a trailing CR removed); blank lines are skipped. */
  onLine(line: string): void;
  /** A line grew past maxBytes: nothing more is read or kept. */
  onOverflow(bytes: number): void;
}

/**
 * Splits a byte stream into newline-delimited lines in linear time: each chunk
 * is searched once, a partial line is kept as a list of chunks and joined once
 * when its newline arrives, and no line may grow past `maxBytes` (the memory a
 * server that never sends a newline can make Keen hold). Bytes are decoded per
 * line, so a UTF-8 character split across chunks is whole.
 */
export function createLineFramer(options: LineFramerOptions) {
  let parts: Buffer[] = [];
  let pending = 0;
  let stopped = false;

  const overflow = (bytes: number) => {
    stopped = true;
    parts = [];
    pending = 0;
    options.onOverflow(bytes);
  };

  return {
    push(chunk: Buffer): void {
      let start = 0;
      while (!stopped) {
        const newline = chunk.indexOf(10, start);
        const end = newline < 0 ? chunk.length : newline;
        if (pending + end - start > options.maxBytes) return overflow(pending + end - start);
        if (newline < 0) {
          if (end > start) {
            parts.push(chunk.subarray(start, end));
            pending += end - start;
          }
          return;
        }
        const piece = chunk.subarray(start, end);
        const bytes = parts.length ? Buffer.concat([...parts, piece], pending + piece.length) : piece;
        parts = [];
        pending = 0;
        start = newline + 1;
        let line = bytes.toString("utf8");
        if (line.endsWith("\r")) line = line.slice(0, -1);
        if (line.trim()) options.onLine(line);
      }
    },
    /** Drops what is kept and ignores every later chunk. */
    stop(): void {
      stopped = true;
      parts = [];
      pending = 0;
    },
  };
}
