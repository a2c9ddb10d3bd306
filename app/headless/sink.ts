/** A line-oriented destination that honours backpressure and notices a reader that left. */
export interface OutputSink {
  /** Resolves once the stream can take more (after `drain` when its buffer is full). */
  write(text: string): Promise<void> | void;
  /** Resolves when everything written so far has been handed to the OS. */
  flush(): Promise<void>;
  readonly gone: boolean;
}

/**
 * Wraps stdout. Contract: never throws and never raises an unhandled `error`;
 * EPIPE (`keen run … | head -1`) marks the sink gone, calls `onGone` once, and
 * later writes are dropped.
 */
export function createStreamSink(stream: NodeJS.WritableStream = process.stdout, onGone: () => void = () => {}): OutputSink {
  let gone = false;
  const markGone = () => {
    if (gone) return;
    gone = true;
    onGone();
  };
  stream.on("error", markGone);
  return {
    get gone() {
      return gone;
    },
    write(text: string) {
      if (gone) return;
      if (stream.write(text)) return;
      return new Promise<void>((resolve) => {
        const done = () => {
          stream.off("drain", done);
          stream.off("error", done);
          stream.off("close", done);
          resolve();
        };
        stream.on("drain", done);
        stream.on("error", done);
        stream.on("close", done);
      });
    },
    flush() {
      if (gone) return Promise.resolve();
      return new Promise<void>((resolve) => stream.write("", () => resolve()));
    },
  };
}
