import type { Subscriber } from "../../protocol/bus.js";
import type { OutputSink } from "./sink.js";

/** `--format text`: the final response's visible text, nothing else. */
export function createTextOutput(sink: OutputSink): Subscriber {
  return (event) => {
    if (event.kind !== "result") return;
    if (event.is_error || !event.text) return;
    return sink.write(event.text.endsWith("\n") ? event.text : `${event.text}\n`);
  };
}

/** `--format json`: exactly one JSON object, the run result, success or failure. */
export function createJsonOutput(sink: OutputSink): Subscriber {
  return (event) => {
    if (event.kind !== "result") return;
    const { kind: _kind, conversation_id: _id, ts: _ts, ...result } = event;
    return sink.write(`${JSON.stringify(result)}\n`);
  };
}

/** Diagnostics for people: errors and retries on stderr, whatever the format. */
export function createStderrReporter(write: (line: string) => void = (l) => process.stderr.write(l)): Subscriber {
  return (event) => {
    if (event.kind === "error") write(`keen: error: ${event.message}\n`);
    else if (event.kind === "retry") write(`keen: retrying in ${(event.delay_ms / 1000).toFixed(1)}s (attempt ${event.attempt}): ${event.reason}\n`);
  };
}
