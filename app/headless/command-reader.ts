import { CommandSchema, type Command, type CommandId } from "../../protocol/commands.js";
import { leadingId } from "./line-id.js";

/** The longest command line accepted: beyond every model's context, so nothing real is refused. */
export const MAX_COMMAND_LINE_BYTES = 16 * 1024 * 1024;

/** How much of a line too long is kept to find its id in (clients write the id before the prompt's text). */
const HEAD_BYTES = 64 * 1024;

/** Where parsed lines go. */
export interface CommandSink {
  command(command: Command): void;
  /** A line that is not a valid command: answered with an error `response`, never fatal. */
  invalid(message: string, id?: CommandId): void;
  end(): void;
}

/**
 * Reads commands from a stream, one JSON object per line. Lines are split on
 * `\n` only — not readline, which also splits on U+2028/U+2029 inside JSON
 * strings — and a `\r` before the `\n` is tolerated. A line longer than
 * `maxBytes` is dropped as it arrives (never held whole) and reported once its
 * `\n` is seen, with its id when that is in the line's first 64 KB; reading
 * goes on with the next line. A UTF-8 byte order mark starting the stream is
 * skipped.
 */
export function readCommands(stream: NodeJS.ReadableStream, sink: CommandSink, maxBytes = MAX_COMMAND_LINE_BYTES): void {
  let parts: Buffer[] = [];
  let size = 0;
  let skipping = false;
  let head = "";
  let first = true;
  const take = (chunk: Buffer) => {
    if (skipping) return;
    if (size + chunk.length > maxBytes) {
      head = Buffer.concat([...parts, chunk], Math.min(HEAD_BYTES, size + chunk.length)).toString("utf8");
      parts = [];
      size = 0;
      skipping = true;
      return;
    }
    parts.push(chunk);
    size += chunk.length;
  };
  const line = () => {
    const atStart = first;
    first = false;
    if (skipping) {
      skipping = false;
      sink.invalid(`line too long: commands are limited to ${maxBytes} bytes`, leadingId(head));
      head = "";
      return;
    }
    // .NET's Encoding.UTF8 writer and PowerShell 5 start what they pipe with a byte order mark; JSON.parse refuses it.
    const decoded = Buffer.concat(parts, size).toString("utf8");
    const text = atStart && decoded.startsWith("\uFEFF") ? decoded.slice(1) : decoded;
    parts = [];
    size = 0;
    const trimmed = text.endsWith("\r") ? text.slice(0, -1) : text;
    if (trimmed.trim()) parseLine(trimmed, sink);
  };
  stream.on("data", (data: Buffer | string) => {
    let chunk = typeof data === "string" ? Buffer.from(data) : data;
    for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10)) {
      take(chunk.subarray(0, at));
      line();
      chunk = chunk.subarray(at + 1);
    }
    if (chunk.length) take(chunk);
  });
  stream.on("end", () => {
    if (size || skipping) line();
    sink.end();
  });
  stream.on("error", () => sink.end());
}

const KINDS = new Set(CommandSchema.options.map((o) => o.shape.kind.value as string));

function parseLine(text: string, sink: CommandSink): void {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return sink.invalid(`not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return sink.invalid("a command must be a JSON object");
  const record = value as Record<string, unknown>;
  // The id is echoed even when the rest is wrong, so the client can tell which command failed.
  const id = typeof record.id === "string" || typeof record.id === "number" ? record.id : undefined;
  if (typeof record.kind !== "string") return sink.invalid('a command needs a "kind"', id);
  if (!KINDS.has(record.kind)) return sink.invalid(`unknown command "${record.kind}"; commands: ${[...KINDS].join(", ")}`, id);
  const parsed = CommandSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return sink.invalid(`${record.kind}: ${issue.path.join(".") || "(command)"}: ${issue.message}`, id);
  }
  sink.command(parsed.data);
}
