import { homedir } from "node:os";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { EventBus } from "../../protocol/bus.js";
import { commandJsonSchema } from "../../protocol/commands.js";
import { protocolJsonSchema } from "../../protocol/jsonl.js";
import type { KeenEvent } from "../../protocol/events.js";
import { isReplayed, nestedIn } from "../../protocol/kinds.js";
import { uniquePrefixes } from "../../protocol/short-ids.js";
import { openStore } from "../../storage/level-store.js";
import { rewoundEvents } from "../../storage/projection.js";
import { SessionBusyError, UnknownSessionError, type SessionMeta, type SessionStore } from "../../storage/store.js";
import { createJsonlWriter } from "../headless/jsonl-writer.js";
import { createStreamSink } from "../headless/sink.js";
import { terminalText } from "../headless/terminal-text.js";
import { sessionCassettePath } from "./cassette-flags.js";
import { keenPaths } from "./config.js";
import { ExitError, UsageError } from "./errors.js";
import { secretsRedactor } from "./secrets.js";

export { uniquePrefixes };


/** Flags of `keen sessions list`. */
export interface ListFlags {
  json?: boolean;
  all?: boolean;
  cwd?: string;
  limit?: string;
}

/** `keen sessions [list] [--cwd <dir> | --all] [--limit n] [--json]`: this directory's sessions unless `--all`, newest first. */
export async function listSessions(flags: ListFlags): Promise<number> {
  if (flags.all && flags.cwd) throw new UsageError("--all lists every directory; it cannot be combined with --cwd");
  const limit = flags.limit === undefined ? undefined : positiveInt("--limit", flags.limit);
  // Stored events are redacted when written; redacting again here also covers sessions an older Keen stored.
  const every = secretsRedactor().redactDeep(await openStore(keenPaths().dataDir).list());
  const dir = resolve(flags.cwd ?? process.cwd());
  const here = flags.all ? every : every.filter((s) => s.cwd === dir);
  const shown = here.slice(0, limit);
  const shortIds = uniquePrefixes(every.map((s) => s.id));
  const sink = createStreamSink();
  if (flags.json) {
    await sink.write(`${JSON.stringify(shown.map((s) => ({ ...s, short_id: shortIds.get(s.id) })))}\n`);
  } else if (shown.length === 0) {
    const elsewhere = every.length - here.length;
    const more = !flags.all && elsewhere > 0 ? `; ${elsewhere} in other directories: keen sessions --all` : "";
    process.stderr.write(`keen: no sessions${flags.all ? "" : ` in ${terminalText(dir)}`} yet${more}\n`);
  } else {
    // A fork names its parent (short id when it is still stored) and the prompt it was forked before.
    const forkOf = (s: SessionMeta) => (s.parent ? `(fork of ${shortIds.get(s.parent.id) ?? s.parent.id}@${s.parent.at}) ` : "");
    const rows = shown.map((s) => [shortIds.get(s.id)!, when(s.updated), s.status, s.model, tilde(s.cwd), oneLine(forkOf(s) + s.title)]);
    // Text for a person: a title or transcript from a hostile prompt or tool must not drive the terminal.
    await sink.write(table([["ID", "UPDATED", "STATUS", "MODEL", "CWD", "TITLE"], ...rows]));
    if (here.length > shown.length) process.stderr.write(`keen: ${here.length - shown.length} older not shown (--limit)\n`);
  }
  await sink.flush();
  return 0;
}

/** `keen sessions show <id> [--json | --jsonl]` */
export async function showSession(idOrPrefix: string, flags: { json?: boolean; jsonl?: boolean }): Promise<number> {
  if (flags.json && flags.jsonl) throw new UsageError("--json and --jsonl are two formats: give one");
  const store = openStore(keenPaths().dataDir);
  const redactor = secretsRedactor();
  const meta = redactor.redactDeep(await resolveOrUsage(store, idOrPrefix));
  const log = redactor.redactDeep(await store.load(meta.id));
  // The transcript and the replay show the current history; --json prints the whole log (rewound turns included).
  const events = flags.json ? log : rewoundEvents(log);
  const sink = createStreamSink();
  if (flags.jsonl) {
    // The replay goes through the same writer as a live run.
    const bus = new EventBus();
    bus.subscribe(createJsonlWriter(sink, { deltas: false }));
    for (const event of events) if (isReplayed(event.kind)) await bus.emit(event);
  } else if (flags.json) {
    await sink.write(`${JSON.stringify({ session: meta, events })}\n`);
  } else {
    const dim = process.stdout.isTTY === true;
    await sink.write(`${meta.id}  ${when(meta.updated)}  ${meta.status}  ${meta.model}  ${terminalText(tilde(meta.cwd))}\n${terminalText(meta.title)}\n\n`);
    for (const line of transcript(events, meta.status === "running")) {
      const text = terminalText(line.text);
      await sink.write(`${line.dim && dim ? `\x1b[2m${text}\x1b[22m` : text}\n`);
    }
  }
  await sink.flush();
  return 0;
}

/**
 * The transcript `keen sessions show` prints, as one markdown text without
 * terminal codes (prompts as `>` quotes, answers as the model wrote them):
 * what the TUI's `/export` writes to a file.
 */
export function transcriptMarkdown(stored: SessionMeta, storedEvents: KeenEvent[]): string {
  // As in `show`: redacted again with the secrets known now.
  const redactor = secretsRedactor();
  const meta = redactor.redactDeep(stored);
  const events = rewoundEvents(redactor.redactDeep(storedEvents));
  const head = `# ${meta.title.replace(/\s+/g, " ").trim() || meta.id}\n\n${meta.id}  ${when(meta.updated)}  ${meta.status}  ${meta.model}  ${tilde(meta.cwd)}\n\n`;
  return head + transcript(events, meta.status === "running").map((line) => `${line.text}\n`).join("");
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

/** `keen sessions rm <id...>`: every id is resolved before any is removed; a busy one is reported and skipped. */
export async function removeSessions(ids: string[]): Promise<number> {
  const store = openStore(keenPaths().dataDir);
  const metas: SessionMeta[] = [];
  for (const id of ids) metas.push(await resolveOrUsage(store, id));
  return removeAll(store, [...new Map(metas.map((m) => [m.id, m])).values()], "removed");
}

/** Flags of `keen sessions prune`. */
export interface PruneFlags {
  olderThan: string;
  status?: string;
  cwd?: string;
  dryRun?: boolean;
}

/** `keen sessions prune --older-than <duration> [--status a,b] [--cwd dir] [--dry-run]`: never a running session. */
export async function pruneSessions(flags: PruneFlags): Promise<number> {
  const age = parseDuration(flags.olderThan);
  const statuses = flags.status?.split(",").map((s) => s.trim()).filter(Boolean);
  for (const status of statuses ?? []) {
    if (!ENDED.includes(status)) throw new UsageError(`--status must be among ${ENDED.join(", ")}, not "${status}"`);
  }
  const store = openStore(keenPaths().dataDir);
  const cutoff = Date.now() - age;
  const dir = flags.cwd === undefined ? undefined : resolve(flags.cwd);
  const doomed = (await store.list()).filter((s) =>
    s.status !== "running" && s.updated < cutoff && (!statuses || statuses.includes(s.status)) && (!dir || s.cwd === dir));
  if (flags.dryRun) {
    const sink = createStreamSink();
    for (const s of doomed) await sink.write(`${s.id}  ${when(s.updated)}  ${s.status}  ${terminalText(oneLine(s.title))}\n`);
    await sink.flush();
    process.stderr.write(`keen: would remove ${doomed.length} session${doomed.length === 1 ? "" : "s"} (dry run)\n`);
    return 0;
  }
  return removeAll(store, doomed, "pruned");
}

/** `keen protocol schema [--commands]` */
export async function printSchema(flags: { commands?: boolean } = {}): Promise<number> {
  const sink = createStreamSink();
  const schema = flags.commands ? commandJsonSchema() : protocolJsonSchema();
  await sink.write(`${JSON.stringify(schema, null, 2)}\n`);
  await sink.flush();
  return 0;
}

const ENDED = ["success", "error", "interrupted", "max_turns"];

async function removeAll(store: SessionStore, metas: SessionMeta[], verb: string): Promise<number> {
  const paths = keenPaths();
  let busy = 0;
  for (const meta of metas) {
    try {
      await store.remove(meta.id);
      rmSync(sessionCassettePath(paths, meta.id), { force: true });
      process.stderr.write(`keen: ${verb} session ${meta.id}\n`);
    } catch (error) {
      if (!(error instanceof SessionBusyError)) throw error;
      busy++;
      process.stderr.write(`keen: ${error.message}; not removed\n`);
    }
  }
  if (verb === "pruned") process.stderr.write(`keen: pruned ${metas.length - busy} session${metas.length - busy === 1 ? "" : "s"}\n`);
  return busy ? 1 : 0;
}

async function resolveOrUsage(store: SessionStore, idOrPrefix: string): Promise<SessionMeta> {
  try {
    return await store.resolve(idOrPrefix);
  } catch (error) {
    if (error instanceof UnknownSessionError) throw new UsageError(error.message);
    throw error;
  }
}

/** `30d`, `12h`, `90m`, `2w`, `45s` → milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$/.exec(text.trim());
  if (!match) throw new UsageError(`--older-than wants a duration such as 30d, 12h, 90m or 2w, not "${text}"`);
  const unit = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }[match[2] as "s" | "m" | "h" | "d" | "w"];
  return Number(match[1]) * unit * 1000;
}

export function positiveInt(flag: string, text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`${flag} must be a positive integer, not "${text}"`);
  return Number(text);
}

/** Rows as left-aligned columns two spaces apart; the last column is not padded. Cells are made inert first. */
function table(rows: string[][]): string {
  const cells = rows.map((row) => row.map((cell) => terminalText(cell)));
  const widths = cells[0]!.map((_, c) => Math.max(...cells.map((row) => [...row[c]!].length)));
  return cells.map((row) => row.map((cell, c) => (c === row.length - 1 ? cell : cell.padEnd(widths[c]! + cell.length - [...cell].length))).join("  ")).join("\n") + "\n";
}

/** Local time, to the minute. */
function when(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
}

function tilde(dir: string): string {
  const home = homedir();
  return home && (dir === home || dir.startsWith(`${home}/`)) ? `~${dir.slice(home.length)}` : dir;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ");
}

/** A transcript line; `dim` for thinking, which a terminal shows faint. */
interface TranscriptLine {
  text: string;
  dim?: boolean;
}

/**
 * The stored events as a person reads them. Thinking is shown faint, cut to
 * a few lines. The partial text of a step cut off by a failure or an
 * interruption is shown with `[partial]`; a turn that ended otherwise than
 * `success` ends with `[turn <status>]` (the protocol's words); a turn with no
 * end at all (its process was killed) reads `[turn interrupted]` unless it is
 * still running.
 */
function transcript(events: KeenEvent[], running: boolean): TranscriptLine[] {
  const lines: TranscriptLine[] = [];
  let open = false;
  for (const event of events) {
    if (nestedIn(event)) {
      // A subagent's work, indented under its task call: its calls, its answer, its errors.
      const line = subagentLine(event);
      if (line) lines.push({ text: `  │ ${line}`, dim: true });
      continue;
    }
    switch (event.kind) {
      case "user-message":
        // The prompt from the turn's first stored event: a process killed right after it stored nothing else.
        if (open) lines.push({ text: "[turn interrupted]\n" });
        open = true;
        lines.push({ text: `> ${event.message.content.map((b) => (b.type === "text" ? b.text : b.type === "image" ? ` [image${b.name ? ` ${b.name}` : ""}]` : "")).join("")}\n` });
        break;
      case "text":
        if (event.role === "assistant") lines.push({ text: `${event.content}\n` });
        break;
      case "thinking":
        lines.push({ text: `[thinking] ${firstLines(event.content.trim(), 3)}\n`, dim: true });
        break;
      case "assistant-message":
        // A stored assistant message without a stop reason is what a cut-off step produced.
        if (event.stop_reason === undefined) {
          const partial = event.message.content.map((b) => (b.type === "text" ? b.text : "")).join("")
            .replace(/<keen_memory>[\s\S]*?(<\/keen_memory>|$)/g, "").trim();
          if (partial) lines.push({ text: `${partial} [partial]\n` });
        }
        break;
      case "tool-use":
        lines.push({ text: `[${event.tool_name}] ${event.input}` });
        break;
      case "tool-result":
        lines.push({ text: `[${event.tool_name} ${event.is_error ? "error" : "ok"}] ${firstLines(event.result, 3)}` });
        break;
      case "error":
        lines.push({ text: `[error] ${event.message}` });
        break;
      case "hook":
        if (event.outcome !== "ok") lines.push({ text: `[hook ${event.hook_event}${event.tool_name ? ` ${event.tool_name}` : ""} ${event.outcome}] ${event.message ?? ""}`.trimEnd() });
        break;
      case "turn-end":
        open = false;
        if (event.status !== "success") lines.push({ text: `[turn ${event.status}]\n` });
        break;
      case "compaction":
        if (event.phase === "start") break;
        lines.push({
          text: event.error
            ? `[compaction (${event.trigger}) failed: ${event.error}; nothing was replaced]`
            : `──── compacted (${event.trigger}): about ${event.tokens_before} → ${event.tokens_after} tokens; the model sees a summary of what is above ────`,
        });
        break;
      case "rewind": {
        const files = event.files.map((f) => `${f.path} ${f.action}`).join(", ");
        const what = event.conversation ? `rewound to before prompt ${event.to} (${oneLine(event.text)})` : `files put back as before prompt ${event.to}`;
        lines.push({ text: `──── ${what}${files ? `; ${files}` : ""} ────\n` });
        break;
      }
      default:
        break;
    }
  }
  if (open && !running) lines.push({ text: "[turn interrupted]\n" });
  return lines;
}

function subagentLine(event: KeenEvent): string | undefined {
  switch (event.kind) {
    case "tool-use": return `[${event.tool_name}] ${event.input}`;
    case "tool-result": return `[${event.tool_name} ${event.is_error ? "error" : "ok"}] ${firstLines(event.result, 1)}`;
    case "text": return event.role === "assistant" ? firstLines(event.content, 3).replace(/\n/g, "\n  │ ") : undefined;
    case "error": return `[error] ${event.message}`;
    default: return undefined;
  }
}

function firstLines(text: string, n: number): string {
  const lines = text.split("\n");
  return lines.length > n ? `${lines.slice(0, n).join("\n")}\n…` : text;
}
