import type { Subscriber } from "../../protocol/bus.js";
import type { OutputSink } from "./sink.js";
import { terminalText } from "./terminal-text.js";

/**
 * `--format text`: the final response's visible text, nothing else. On a
 * terminal (`forTerminal`) escape sequences and control characters in it are
 * made visible; piped or redirected, a script gets the model's exact text.
 */
export function createTextOutput(sink: OutputSink, forTerminal = false): Subscriber {
  return (event) => {
    if (event.kind !== "result") return;
    if (event.is_error || !event.text) return;
    const text = forTerminal ? terminalText(event.text) : event.text;
    return sink.write(text.endsWith("\n") ? text : `${text}\n`);
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

/** Diagnostics for people: errors and retries on stderr, whatever the format; no control sequence from outside gets through. */
export function createStderrReporter(write: (line: string) => void = (l) => process.stderr.write(l)): Subscriber {
  return (event) => {
    if (event.kind === "error") write(`keen: error: ${terminalText(event.message)}\n`);
    else if (event.kind === "retry") {
      write(`keen: retrying in ${(event.delay_ms / 1000).toFixed(1)}s (attempt ${event.attempt}): ${terminalText(event.reason)}\n`);
    } else if (event.kind === "compaction" && event.phase === "end" && !event.replay) {
      write(event.error
        ? `keen: compaction (${event.trigger}) failed, the conversation is unchanged: ${terminalText(event.error)}\n`
        : `keen: compacted the conversation (${event.trigger}): about ${event.tokens_before} → ${event.tokens_after} tokens\n`);
    }
  };
}
