import type { Subscriber } from "../../protocol/bus.js";
import { DELTA_KINDS, isInternal } from "../../protocol/kinds.js";
import type { OutputSink } from "./sink.js";

/** Which kinds a JSONL stream carries. */
export interface JsonlOptions {
  /** `--stream-deltas`: also the delta kinds. */
  deltas: boolean;
}

/**
 * The JSON-lines writer: prints bus events as they are, one per line, adding
 * only `seq` (contiguous from 0 within this output stream). Internal events
 * are never printed. Live runs and replays use this same writer.
 */
export function createJsonlWriter(sink: OutputSink, options: JsonlOptions): Subscriber {
  let seq = 0;
  return (event) => {
    if (isInternal(event)) return;
    if (!options.deltas && DELTA_KINDS.has(event.kind)) return;
    return sink.write(`${JSON.stringify({ ...event, seq: seq++ })}\n`);
  };
}
