import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { EventBus } from "../../protocol/bus.js";
import { commandJsonSchema } from "../../protocol/commands.js";
import { protocolJsonSchema } from "../../protocol/jsonl.js";
import type { KeenEvent } from "../../protocol/events.js";
import { isReplayed } from "../../protocol/kinds.js";
import { openStore } from "../../storage/level-store.js";
import { SessionBusyError, UnknownSessionError, type SessionMeta } from "../../storage/store.js";
import { createJsonlWriter } from "../headless/jsonl-writer.js";
import { createStreamSink } from "../headless/sink.js";
import { terminalText } from "../headless/terminal-text.js";
import { sessionCassettePath } from "./cassette-setup.js";
import { keenPaths } from "./config.js";
import { ExitError, UsageError } from "./errors.js";
import { secretsRedactor } from "./secrets.js";

/** `keen sessions list [--json]` */
export async function listSessions(flags: { json?: boolean }): Promise<number> {
  // Stored events are redacted when written; redacting again here also covers sessions an older Keen stored.
  const sessions = secretsRedactor().redactDeep(await openStore(keenPaths().dataDir).list());
  const sink = createStreamSink();
  if (flags.json) {
    await sink.write(`${JSON.stringify(sessions)}\n`);
  } else if (sessions.length === 0) {
    process.stderr.write("keen: no sessions yet\n");
  } else {
    // Text for a person: a title or transcript from a hostile prompt or tool must not drive the terminal.
    for (const s of sessions) await sink.write(`${terminalText(formatRow(s))}\n`);
  }
  await sink.flush();
  return 0;
}

/** `keen sessions show <id> [--json | --jsonl]` */
export async function showSession(idOrPrefix: string, flags: { json?: boolean; jsonl?: boolean }): Promise<number> {
  const store = openStore(keenPaths().dataDir);
  const redactor = secretsRedactor();
  const meta = redactor.redactDeep(await resolveOrUsage(store, idOrPrefix));
  const events = redactor.redactDeep(await store.load(meta.id));
  const sink = createStreamSink();
  if (flags.jsonl) {
    // The replay goes through the same writer as a live run.
    const bus = new EventBus();
    bus.subscribe(createJsonlWriter(sink, { deltas: false }));
    for (const event of events) if (isReplayed(event.kind)) await bus.emit(event);
  } else if (flags.json) {
    await sink.write(`${JSON.stringify({ session: meta, events })}\n`);
  } else {
    await sink.write(`${terminalText(formatRow(meta))}\n\n`);
    for (const event of events) {
      const line = transcriptLine(event);
      if (line) await sink.write(`${terminalText(line)}\n`);
    }
  }
  await sink.flush();
  return 0;
}

/**
 * `keen sessions export <id> --cassette <file>`: the session's own copy of
 * its recorded requests (kept only when it ran with --record or KEEN_RECORD),
 * redacted again with the secrets known now, as a cassette `--replay` takes.
 */
export async function exportSession(idOrPrefix: string, flags: { cassette: string }): Promise<number> {
  const paths = keenPaths();
  const meta = await resolveOrUsage(openStore(paths.dataDir), idOrPrefix);
  const source = sessionCassettePath(paths, meta.id);
  if (!existsSync(source)) {
    throw new ExitError(`session ${meta.id} was not recorded: only runs with --record <file> (or KEEN_RECORD) keep a cassette`, 1);
  }
  const redactor = secretsRedactor();
  const lines = readFileSync(source, "utf8").split("\n").filter((line) => line.trim() !== "");
  const text = lines.map((line) => redactor.redact(line)).join("\n") + "\n";
  if (flags.cassette === "-") {
    const sink = createStreamSink();
    await sink.write(text);
    await sink.flush();
  } else {
    writeFileSync(resolve(flags.cassette), text);
    process.stderr.write(`keen: wrote the cassette of session ${meta.id} (${lines.length} lines) to ${flags.cassette}\n`);
  }
  return 0;
}

/** `keen sessions rm <id>` */
export async function removeSession(idOrPrefix: string): Promise<number> {
  const paths = keenPaths();
  const store = openStore(paths.dataDir);
  const meta = await resolveOrUsage(store, idOrPrefix);
  try {
    await store.remove(meta.id);
  } catch (error) {
    if (error instanceof SessionBusyError) throw new ExitError(error.message, 1);
    throw error;
  }
  rmSync(sessionCassettePath(paths, meta.id), { force: true });
  process.stderr.write(`keen: removed session ${meta.id}\n`);
  return 0;
}

/** `keen protocol schema [--commands]` */
export async function printSchema(flags: { commands?: boolean } = {}): Promise<number> {
  const sink = createStreamSink();
  const schema = flags.commands ? commandJsonSchema() : protocolJsonSchema();
  await sink.write(`${JSON.stringify(schema, null, 2)}\n`);
  await sink.flush();
  return 0;
}

async function resolveOrUsage(store: ReturnType<typeof openStore>, idOrPrefix: string): Promise<SessionMeta> {
  try {
    return await store.resolve(idOrPrefix);
  } catch (error) {
    if (error instanceof UnknownSessionError) throw new UsageError(error.message);
    throw error;
  }
}

function formatRow(s: SessionMeta): string {
  const when = new Date(s.updated).toISOString().replace("T", " ").slice(0, 16);
  return `${s.id}  ${when}  ${s.status.padEnd(11)}  ${s.model}  ${s.title}`;
}

function transcriptLine(event: KeenEvent): string | undefined {
  switch (event.kind) {
    case "text":
      return `${event.role === "user" ? "> " : ""}${event.content}\n`;
    case "tool-use":
      return `[${event.tool_name}] ${event.input}`;
    case "tool-result":
      return `[${event.tool_name} ${event.is_error ? "error" : "ok"}] ${firstLines(event.result, 3)}`;
    case "error":
      return `[error] ${event.message}`;
    case "turn-end":
      return event.status === "success" ? undefined : `[turn ${event.status}]`;
    case "compaction":
      if (event.phase === "start") return undefined;
      return event.error
        ? `[compaction (${event.trigger}) failed: ${event.error}; nothing was replaced]`
        : `──── compacted (${event.trigger}): about ${event.tokens_before} → ${event.tokens_after} tokens; the model sees a summary of what is above ────`;
    default:
      return undefined;
  }
}

function firstLines(text: string, n: number): string {
  const lines = text.split("\n");
  return lines.length > n ? `${lines.slice(0, n).join("\n")}\n…` : text;
}
