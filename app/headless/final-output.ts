import type { Subscriber } from "../../protocol/bus.js";
import type { OutputSink } from "./sink.js";
import { terminalText } from "./terminal-text.js";

/**
 * `--format text` when stdout is not a terminal: the final response's visible
 * text, nothing else. An interrupted run (Ctrl-C) prints what the model said
 * so far instead. Piped or redirected, a script gets the model's exact text;
 * `forTerminal` makes escape sequences and control characters visible.
 */
export function createTextOutput(sink: OutputSink, forTerminal = false): Subscriber {
  let said = "";
  let attempt = 0;
  return (event) => {
    if (event.kind === "text-delta" && event.attempt >= attempt) {
      attempt = event.attempt;
      said += event.delta;
    }
    if (event.kind === "retry") attempt = event.attempt;
    if (event.kind !== "result") return;
    const raw = event.status === "interrupted" ? said : event.is_error ? "" : event.text;
    if (!raw) return;
    const text = forTerminal ? terminalText(raw) : raw;
    return sink.write(text.endsWith("\n") ? text : `${text}\n`);
  };
}

/**
 * `--format text`: the session id on stderr once the run ends — always when the
 * run was interrupted or failed (with the command that resumes it), and for a
 * finished run only when `always` (stderr is a terminal). Scripts that pipe
 * stderr see nothing new on success.
 */
export function createSessionNote(always: boolean, write: (line: string) => void = (l) => process.stderr.write(l)): Subscriber {
  return (event) => {
    if (event.kind !== "result") return;
    if (event.status === "success" && !always) return;
    const how = event.status === "interrupted" ? "interrupted" : event.is_error ? "failed" : "done";
    write(`keen: ${how} · session ${event.session_id} · continue with: keen run -s ${event.session_id} "…" (or keen run -c in this directory)\n`);
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
    } else if (event.kind === "mcp-server" && event.message && event.status !== "connected" && event.status !== "tools-changed") {
      write(`keen: mcp: ${terminalText(event.message)}\n`);
    }
  };
}
