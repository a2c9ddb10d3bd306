import type { Subscriber } from "../../protocol/bus.js";
import { kindClass } from "../../protocol/kinds.js";
import type { OutputSink } from "./sink.js";

/** Which kinds a JSONL stream carries. */
export interface JsonlOptions {
  /** `--stream-deltas`: also the delta kinds. */
  deltas: boolean;
  /** The two-way protocol (`keen stdio`): also `permission-request` and `response`. */
  control?: boolean;
}

/**
 * The JSON-lines writer: prints bus events as they are, one per line, adding
 * only `seq` (contiguous from 0 within this output stream). Internal events
 * are never printed. Live runs and replays use this same writer.
 */
export function createJsonlWriter(sink: OutputSink, options: JsonlOptions): Subscriber {
  let seq = 0;
  return (event) => {
    const c = kindClass(event.kind);
    if (c === "internal" || (c === "delta" && !options.deltas) || (c === "control" && !options.control)) return;
    return sink.write(`${JSON.stringify({ ...event, seq: seq++ })}\n`);
  };
}
