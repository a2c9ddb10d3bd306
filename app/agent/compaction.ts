import type { EventDraft } from "../../protocol/events.js";
import type { Message } from "../../protocol/messages.js";
import type { Provider } from "../../protocol/provider.js";
import type { PendingRequest, TurnPolicy } from "./policy.js";
import { streamWithRetry, type RetryPolicy } from "./retry.js";

/** When and how much to compact; from config over the model's window. */
export interface CompactionSettings {
  window: number;
  /** Compact before a request whose context plus expected output would pass this share of the window. */
  threshold: number;
  /** Recent messages kept verbatim, at most this many tokens. */
  keepTokens: number;
  /** Output expected from the next request (counted with the prompt). */
  reserveTokens: number;
}

export type CompactionTrigger = "auto" | "manual" | "overflow";

/** Opens every summary message; a conversation that starts with one was compacted before. */
export const SUMMARY_HEAD = "[Keen compacted this conversation: the summary below replaces the earlier messages.]";
const ACK = "Understood. I will continue from the summary.";
const MEMORY = /<keen_memory>([\s\S]*?)<\/keen_memory>/g;
const TOOL_TEXT_LIMIT = 2_000;

const SUMMARY_SYSTEM = `You summarise the conversation of a coding agent so that the agent can continue the work from your summary alone; the original messages will be gone.
Write plain text with these sections:
- Goals and constraints: what the user asked for and every constraint or preference they stated (quote them where the wording matters).
- Decisions: what was decided and why.
- Files: every file path read, created or changed, and what changed.
- Commands: commands that matter (build, test, run) and their outcomes.
- State and open problems: what works, what fails (exact error messages), what remains to do next.
Keep exact paths, identifiers, commands and error texts. Do not invent anything, do not call tools, do not address the user.`;

/** Rough token count of text (about four characters a token). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Rough token count of messages as a provider would receive them. */
export function messageTokens(messages: Message[]): number {
  return messages.reduce((sum, m) => sum + contentTokens(m.content) + 4, 0);
}

/** What an image costs a model: about (width x height) / 750 tokens, at most ~1,600 within Keen's caps (app/tools/image.ts). */
const IMAGE_TOKENS = 1_600;

/** An image's base64 is not text the model reads: it counts IMAGE_TOKENS, not its length / 4. */
function contentTokens(content: Message["content"]): number {
  let images = 0;
  const text = JSON.stringify(content, (_key, value) => {
    if (value && typeof value === "object" && typeof value.data === "string" && typeof value.media_type === "string") {
      images++;
      return { ...value, data: "" };
    }
    return value;
  });
  return estimateTokens(text) + images * IMAGE_TOKENS;
}

/**
 * The context a pending request would use: the larger of the estimate of
 * everything sent and, once the turn made a request, that request's input
 * tokens (cache reads and writes are already in them) plus its output plus the
 * estimate of what was added since.
 */
export function contextTokens(request: Pick<PendingRequest, "system" | "tools" | "messages" | "last">): number {
  const estimate = estimateTokens(request.system) + estimateTokens(JSON.stringify(request.tools)) + messageTokens(request.messages);
  if (!request.last) return estimate;
  const { usage, sent } = request.last;
  return Math.max(estimate, usage.input_tokens + usage.output_tokens + messageTokens(request.messages.slice(sent + 1)));
}

/**
 * Where to cut `messages`: the earliest index whose tail fits `keepTokens`,
 * else the latest allowed one. A cut never separates an assistant tool call
 * from its results (a thinking block is in the same message as its call), and
 * a conversation ending with a user message keeps that message. Returns 0
 * when nothing but an earlier summary would be replaced.
 */
export function cutIndex(messages: Message[], keepTokens: number): number {
  const allowed: number[] = [];
  const end = messages[messages.length - 1]?.role === "user" ? messages.length - 1 : messages.length;
  for (let i = 1; i <= end; i++) {
    const before = messages[i - 1]!;
    if (before.role === "assistant" && before.content.some((b) => b.type === "tool_call")) continue;
    allowed.push(i);
  }
  if (allowed.length === 0) return 0;
  const fitting = allowed.find((i) => messageTokens(messages.slice(i)) <= keepTokens);
  const cut = fitting ?? allowed[allowed.length - 1]!;
  const replacedOnlySummary = messages.slice(0, cut).every((m) => isSummary(m) || (m.role === "assistant" && textOf(m) === ACK));
  return replacedOnlySummary ? 0 : cut;
}

/** What a compaction needs. */
export interface CompactOptions {
  provider: Provider;
  messages: Message[];
  keepTokens: number;
  trigger: CompactionTrigger;
  /** The turn it happens in; absent between turns (manual). */
  turnId?: string;
  instructions?: string;
  tokensBefore: number;
  emit: (event: EventDraft) => Promise<void>;
  signal: AbortSignal;
  retry: RetryPolicy;
}

/** How a compaction ended. */
export type CompactResult = { ok: true; messages: Message[]; tokensAfter: number } | { ok: false; error: string };

/**
 * Replaces the older part of `messages` by a summary from the same provider
 * and model, keeps the recent part verbatim, and appends every `<keen_memory>`
 * block of the replaced part to the summary by code. Contract: never throws;
 * emits `compaction` start and end; only on success stores the replacement
 * (`context-replacement`), so a failed compaction leaves the session as it was.
 */
export async function compactConversation(options: CompactOptions): Promise<CompactResult> {
  const { emit, trigger } = options;
  const cut = cutIndex(options.messages, options.keepTokens);
  if (cut === 0) return { ok: false, error: "nothing to compact" };
  await emit({ kind: "compaction", phase: "start", trigger, tokens_before: options.tokensBefore });
  const replaced = options.messages.slice(0, cut);
  const kept = options.messages.slice(cut);
  const summary = await summarise(options, replaced);
  if (!summary.ok) {
    await emit({ kind: "compaction", phase: "end", trigger, tokens_before: options.tokensBefore, error: summary.error });
    return summary;
  }
  const memories = [...new Set(replaced.flatMap((m) => [...textOf(m).matchAll(MEMORY)].map((match) => match[1]!)))];
  const text = [
    SUMMARY_HEAD, `<summary>\n${summary.text}\n</summary>`,
    ...(memories.length ? ["Tool memory of the replaced messages, verbatim:", ...memories.map((m) => `<keen_memory>${m}</keen_memory>`)] : []),
  ].join("\n\n");
  const headless = [...options.messages].reverse().find(isRealUserMessage)?.headless;
  const head: Message[] = [{ role: "user", content: [{ type: "text", text }], ...(headless !== undefined ? { headless } : {}) }];
  if (kept[0]?.role !== "assistant") head.push({ role: "assistant", content: [{ type: "text", text: ACK }] });
  const messages = [...head, ...kept];
  const tokensAfter = messageTokens(messages);
  await emit({ kind: "context-replacement", ...(options.turnId ? { turn_id: options.turnId } : {}), trigger, messages });
  await emit({ kind: "compaction", phase: "end", trigger, tokens_before: options.tokensBefore, tokens_after: tokensAfter });
  return { ok: true, messages, tokensAfter };
}

async function summarise(options: CompactOptions, replaced: Message[]): Promise<{ ok: true; text: string } | { ok: false; error: string }> {
  const ask = `<conversation>\n${transcript(replaced)}\n</conversation>\n\nSummarise the conversation above as instructed.${
    options.instructions ? `\nThe user asks for this in particular: ${options.instructions}` : ""}`;
  const request = { system: SUMMARY_SYSTEM, messages: [{ role: "user" as const, content: [{ type: "text" as const, text: ask }] }], tools: [], sessionId: "" };
  let error = "the summary request ended without a result";
  try {
    for await (const item of streamWithRetry(options.provider, request, options.retry, options.signal)) {
      if (item.type !== "event") continue;
      if (item.event.type === "error") error = item.event.failure.message;
      if (item.event.type === "done") {
        const text = textOf(item.event.message).replace(MEMORY, "").trim();
        return text ? { ok: true, text } : { ok: false, error: "the summary came back empty" };
      }
    }
  } catch (thrown) {
    // Providers never throw by contract; a compaction must not end the turn even if one does.
    error = thrown instanceof Error ? thrown.message : String(thrown);
  }
  return { ok: false, error: options.signal.aborted ? "interrupted" : error };
}

/** The replaced messages as plain text: no thinking, tool I/O shortened, so the summary request is always valid. */
function transcript(messages: Message[]): string {
  const lines: string[] = [];
  for (const message of messages) {
    for (const block of message.content) {
      if (block.type === "text") lines.push(`[${message.role}] ${block.text}`);
      else if (block.type === "tool_call") lines.push(`[tool call ${block.name}] ${clip(JSON.stringify(block.input ?? {}))}`);
      else if (block.type === "tool_result") lines.push(`[tool result${block.is_error ? ", error" : ""}] ${clip(block.content)}`);
    }
  }
  return lines.join("\n\n");
}

function clip(text: string): string {
  return text.length > TOOL_TEXT_LIMIT ? `${text.slice(0, TOOL_TEXT_LIMIT)}… [${text.length - TOOL_TEXT_LIMIT} more characters]` : text;
}

function textOf(message: Message): string {
  return message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
}

function isSummary(message: Message): boolean {
  return message.role === "user" && textOf(message).startsWith(SUMMARY_HEAD);
}

function isRealUserMessage(message: Message): boolean {
  return message.role === "user" && !isSummary(message) && message.content.some((b) => b.type === "text");
}

/**
 * The automatic compaction policy: before a request whose context and expected
 * output would pass the threshold, and after a request that overflowed the
 * window, it compacts and the turn continues with the result. A failed
 * compaction changes nothing (an overflowed request then fails the turn) and
 * is not tried again automatically in the same turn.
 */
export function createCompactionPolicy(provider: Provider, settings: CompactionSettings): TurnPolicy {
  let failed = false;
  return {
    async beforeRequest(request) {
      const tokensBefore = contextTokens(request);
      const trigger: CompactionTrigger = request.overflow ? "overflow" : "auto";
      if (trigger === "auto" && (failed || tokensBefore + settings.reserveTokens <= settings.threshold * settings.window)) return undefined;
      const result = await compactConversation({
        provider, messages: request.messages, keepTokens: settings.keepTokens, trigger, turnId: request.turnId, tokensBefore,
        emit: request.emit, signal: request.signal, retry: request.retry,
      });
      if (!result.ok) failed = true;
      return result.ok ? result.messages : undefined;
    },
  };
}
