import type { Subscriber } from "../../protocol/bus.js";
import type { KeenEvent } from "../../protocol/events.js";
import type { OutputSink } from "./sink.js";
import { terminalText } from "./terminal-text.js";

/** Where the live text output writes: the answer to stdout, progress to stderr. */
export interface LiveTextOptions {
  /** stderr, for tool activity and notes. */
  note: (line: string) => void;
}

/**
 * `--format text` when stdout is a terminal: the answer streams as it arrives
 * (text deltas, made inert for the terminal); tool activity goes to stderr
 * as one line per call (`· bash: echo hi` then `  done` / `  failed: …`).
 * A retry voids the attempt's deltas: what was already shown stays, and a
 * note on stderr says the answer starts again. The final result adds nothing
 * the stream did not show, except a final newline and, when the stream showed
 * nothing (a structured-output answer, say), the result's text.
 */
export function createLiveTextOutput(sink: OutputSink, options: LiveTextOptions): Subscriber {
  let atLineStart = true;
  let streamed = "";
  let attempt = 0;
  const write = (text: string) => {
    if (!text) return;
    atLineStart = text.endsWith("\n");
    return sink.write(text);
  };
  const endLine = () => (atLineStart ? undefined : write("\n"));
  return (event: KeenEvent) => {
    switch (event.kind) {
      case "text-delta":
        if (event.attempt < attempt) return;
        attempt = event.attempt;
        streamed += event.delta;
        return write(terminalText(event.delta));
      case "content-end":
        return endLine();
      case "retry":
        attempt = event.attempt;
        if (!atLineStart) {
          const pending = endLine();
          options.note("keen: (the answer above was cut off; it starts again)\n");
          return pending;
        }
        return;
      case "tool-use": {
        const pending = endLine();
        options.note(`keen: ${terminalText(event.tool_name)} ${terminalText(shortInput(event.input))}\n`);
        return pending;
      }
      case "tool-result":
        options.note(event.is_error
          ? `keen:   ${terminalText(event.tool_name)} failed: ${terminalText(firstLine(event.result))}\n`
          : `keen:   ${terminalText(event.tool_name)} done\n`);
        return;
      case "result":
        if (!streamed.trim() && event.text && !event.is_error) return write(`${terminalText(event.text)}\n`);
        return endLine();
      default:
        return;
    }
  };
}

/** A tool input (JSON) as one short line: its string values, or the JSON itself, cut at 80 characters. */
export function shortInput(input: string): string {
  let text = input;
  try {
    const value = JSON.parse(input) as unknown;
    if (value && typeof value === "object") {
      const parts = Object.values(value as Record<string, unknown>).map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
      text = parts.join(" ");
    }
  } catch {
    // Not JSON: show it as it came.
  }
  return cut(text.replace(/\s+/g, " ").trim(), 80);
}

function firstLine(text: string): string {
  return cut(text.trim().split("\n")[0] ?? "", 100);
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
