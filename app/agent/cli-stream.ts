import type { EventDraft } from "../../protocol/events.js";
import type { Usage } from "../../protocol/messages.js";
import type { ProviderEvent } from "../../protocol/provider.js";
import { AnthropicStreamState, type AnthropicStreamEvent } from "../providers/anthropic-stream.js";
import { cliCallView } from "./cli-tools.js";
import { MemoryFilter } from "./memory-filter.js";
import { createStepEmitter, type StepEmitter } from "./step-emitter.js";

/** What the `result` line of `claude -p --output-format stream-json` said. */
export interface CliResult {
  status: "success" | "error" | "max_turns";
  /** Visible text of the answer (tool memory filtered out). */
  text: string;
  errors: string[];
  numTurns: number;
  usage: Usage;
  stopReason?: string;
  costUsd?: number;
  /** Usage of the CLI's last model request (its stream's message_start / message_delta): what the context held. */
  lastUsage?: Usage;
  /** The model's window as the CLI reports it (`modelUsage`). */
  contextWindow?: number;
}

type Json = Record<string, unknown>;

/** The message in flight: the Anthropic provider's parser of its stream and the step's emitter of its events. */
interface InFlight {
  id: string;
  stream: AnthropicStreamState;
  events: StepEmitter;
}

/**
 * Translates the CLI's NDJSON, one line at a time, into Keen's events, through the code the
 * embedded loop uses: each `stream_event` line's `event` is an Anthropic stream event, parsed
 * by the Anthropic provider's own parser (AnthropicStreamState) into ProviderEvents, which
 * the step's emitter (createStepEmitter) turns into `text-delta` / `thinking-*` /
 * `content-end` as they stream and into `thinking`, `text`, `memory` and `tool-use` once the
 * message stops: the same events, in the same order, as a step of the embedded loop. The
 * complete `assistant` frames (one per content block) only stand in for a message that was
 * not streamed (no `--include-partial-messages`, a frame the CLI made itself): their blocks go
 * through the same emitter, whole. `user` frames' `tool_result` blocks become `tool-result`;
 * the `result` line ends it. With `askFirst` (ask mode: the CLI asks Keen before it runs a
 * tool), a call's `tool-start` waits for the answer, as in the embedded loop: after an allow
 * (`decided`), or before its result when nobody was asked; never after a denial.
 * Contract: `line` never throws; malformed and unknown lines are skipped.
 */
export function createCliTranslator(emit: (event: EventDraft) => Promise<void>, debug?: (line: string) => void, askFirst = false) {
  let sessionId: string | undefined;
  let tools: string[] = [];
  let result: CliResult | undefined;
  let message: InFlight | undefined;
  /** Messages the stream carried (their assistant frames repeat what it said). */
  const streamed = new Set<string>();
  /** Blocks of frames already taken (the CLI may repeat a frame). */
  const seen = new Set<string>();
  const toolNames = new Map<string, string>();
  const texts: string[] = [];
  /** Usage of the main model's last request (its stream's message_start / message_delta). */
  let lastUsage: Usage | undefined;
  /** Calls emitted as tool-use whose tool-start waits for the user's answer (askFirst). */
  const unstarted = new Map<string, string>();
  const announced = new Set<string>();
  const waiting = new Map<string, (() => void)[]>();
  /** When each call's tool-start went out, for the result's `duration_ms`. */
  const startedAt = new Map<string, number>();

  /** What the emitter emits, plus what only a CLI turn needs: the CLI runs its own tools, so a call starts once complete, unless the CLI asks first. */
  async function out(event: EventDraft): Promise<void> {
    if (event.kind === "tool-use") {
      toolNames.set(event.tool_call_id, event.tool_name);
      if (askFirst) unstarted.set(event.tool_call_id, event.tool_name);
    }
    await emit(event);
    if (event.kind === "text") texts.push(event.content);
    if (event.kind !== "tool-use") return;
    announced.add(event.tool_call_id);
    for (const wake of waiting.get(event.tool_call_id) ?? []) wake();
    waiting.delete(event.tool_call_id);
    if (askFirst) return;
    await emit({ kind: "tool-start", role: "assistant", tool_name: event.tool_name, tool_call_id: event.tool_call_id });
    startedAt.set(event.tool_call_id, Date.now());
  }

  function open(id: string): InFlight {
    message = { id, stream: new AnthropicStreamState(), events: createStepEmitter(out, 1) };
    return message;
  }

  /** The message in flight is complete: its entries go out. */
  async function complete(): Promise<void> {
    const done = message;
    message = undefined;
    if (!done) return;
    if (done.stream.reportedUsage) lastUsage = done.stream.usage();
    await done.events.complete(cliCallView);
  }

  async function start(id: string): Promise<void> {
    const name = unstarted.get(id);
    if (name === undefined) return;
    unstarted.delete(id);
    await emit({ kind: "tool-start", role: "assistant", tool_name: name, tool_call_id: id });
    startedAt.set(id, Date.now());
  }

  async function streamEvent(event: Json): Promise<void> {
    if (event.type === "message_start") {
      await complete();
      const id = (event.message as Json | undefined)?.id;
      open(typeof id === "string" ? id : "");
      if (typeof id === "string") streamed.add(id);
    }
    const current = message ?? open("");
    let parsed: ProviderEvent[];
    try {
      parsed = [...current.stream.handle(event as unknown as AnthropicStreamEvent)];
    } catch {
      return debug?.(`skipped a malformed stream event: ${JSON.stringify(event).slice(0, 200)}`);
    }
    for (const item of parsed) await feed(current, item);
    if (event.type === "message_stop") await complete();
  }

  async function feed(target: InFlight, item: ProviderEvent): Promise<void> {
    if (item.type === "tool-call") target.events.call({ id: item.id, name: item.name, input: item.input });
    else if (item.type !== "done" && item.type !== "error") await target.events.take(item);
  }

  async function assistantFrame(frame: Json): Promise<void> {
    const id = typeof frame.id === "string" ? frame.id : "";
    if (streamed.has(id)) return;
    if (message?.id !== id) {
      await complete();
      open(id);
    }
    const target = message!;
    const content = Array.isArray(frame.content) ? (frame.content as Json[]) : [];
    for (const [index, part] of content.entries()) {
      const key = `${id}\0${String(part.type)}\0${typeof part.id === "string" ? part.id : index}\0${typeof part.text === "string" ? part.text : ""}`;
      if (seen.has(key)) continue;
      seen.add(key);
      // The block whole, as a provider streams a block that arrives in one piece.
      if (part.type === "thinking" && typeof part.thinking === "string" && part.thinking) {
        for (const type of ["thinking-start", "thinking-delta", "thinking-end"] as const) {
          await feed(target, type === "thinking-delta" ? { type, text: part.thinking } : { type });
        }
      } else if (part.type === "text" && typeof part.text === "string") {
        await feed(target, { type: "text-delta", text: part.text });
        await feed(target, { type: "text-end" });
      } else if (part.type === "tool_use" && typeof part.id === "string") {
        await feed(target, { type: "tool-call", id: part.id, name: typeof part.name === "string" ? part.name : "unknown", input: part.input ?? {} });
      }
    }
  }

  async function userFrame(frame: Json): Promise<void> {
    await complete();
    const content = Array.isArray(frame.content) ? (frame.content as Json[]) : [];
    for (const part of content) {
      if (part.type !== "tool_result" || typeof part.tool_use_id !== "string") continue;
      await start(part.tool_use_id);
      const filter = new MemoryFilter();
      const text = filter.push(resultText(part.content)) + filter.flush();
      await emit({
        kind: "tool-result", role: "assistant", tool_name: toolNames.get(part.tool_use_id) ?? "unknown",
        tool_call_id: part.tool_use_id, result: text, is_error: part.is_error === true,
        ...(startedAt.has(part.tool_use_id) ? { duration_ms: Date.now() - startedAt.get(part.tool_use_id)! } : {}),
      });
    }
  }

  async function resultLine(line: Json): Promise<void> {
    await complete();
    const filter = new MemoryFilter();
    const raw = typeof line.result === "string" ? line.result : "";
    const text = filter.push(raw) + filter.flush();
    const errors = Array.isArray(line.errors) ? line.errors.map(String) : [];
    const isError = line.is_error === true;
    const status = !isError ? "success" : line.subtype === "error_max_turns" ? "max_turns" : "error";
    if (status === "error" && errors.length === 0) errors.push(raw || `claude ended with ${String(line.subtype ?? "an error")}`);
    result = {
      status, text: isError ? "" : text || texts.at(-1) || "", errors,
      numTurns: typeof line.num_turns === "number" ? line.num_turns : 0,
      usage: usageOf(line.usage as Json | undefined),
      ...(typeof line.stop_reason === "string" ? { stopReason: line.stop_reason } : {}),
      ...(typeof line.total_cost_usd === "number" ? { costUsd: line.total_cost_usd } : {}),
      ...(lastUsage ? { lastUsage } : {}),
      ...(contextWindowOf(line.modelUsage) ? { contextWindow: contextWindowOf(line.modelUsage) } : {}),
    };
  }

  return {
    /** Feeds one line of the CLI's stdout. */
    async line(text: string): Promise<void> {
      if (!text.trim()) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        debug?.(`skipped a malformed line: ${text.slice(0, 200)}`);
        return;
      }
      if (!parsed || typeof parsed !== "object") return debug?.(`skipped a line that is not an object`);
      const json = parsed as Json;
      if (typeof json.session_id === "string") sessionId ??= json.session_id;
      switch (json.type) {
        case "system":
          if (json.subtype === "init" && Array.isArray(json.tools)) tools = json.tools.filter((t): t is string => typeof t === "string");
          return;
        case "stream_event":
          // Lines of a subagent (parent_tool_use_id set) stay inside its tool call.
          if (json.parent_tool_use_id) return;
          if (json.event && typeof json.event === "object") await streamEvent(json.event as Json);
          return;
        case "assistant":
          if (json.parent_tool_use_id) return;
          if (json.message && typeof json.message === "object") await assistantFrame(json.message as Json);
          return;
        case "user":
          if (json.parent_tool_use_id) return;
          if (json.message && typeof json.message === "object") await userFrame(json.message as Json);
          return;
        case "result":
          return resultLine(json);
        default:
          debug?.(`skipped a line of type ${String(json.type)}`);
      }
    },
    /** Resolves once the call's tool-use is out, so a permission request follows it (a CLI stdout not yet read). */
    toolUse(id: string): Promise<void> {
      if (announced.has(id)) return Promise.resolve();
      return new Promise((resolve) => waiting.set(id, [...(waiting.get(id) ?? []), resolve]));
    },
    /** The user's answer to the CLI's ask: an allowed call starts now; a denied one never starts. */
    async decided(id: string, allow: boolean): Promise<void> {
      if (allow) await start(id);
      else unstarted.delete(id);
    },
    /** Emits the complete entries of a message still in flight (a stream cut before it stopped). */
    finish: complete,
    get sessionId() {
      return sessionId;
    },
    /** The CLI's tools, from its init line. */
    get tools() {
      return tools;
    },
    get result() {
      return result;
    },
    /** Visible text the assistant produced so far (for an interrupted turn). */
    get text() {
      return texts.join("\n");
    },
  };
}

/** The CLI's usage mapped onto Keen's: input counts cache reads and writes, as every provider's does. */
export function usageOf(usage: Json | undefined): Usage {
  const n = (key: string) => (typeof usage?.[key] === "number" ? (usage[key] as number) : 0);
  const cached = n("cache_read_input_tokens");
  const written = n("cache_creation_input_tokens");
  const input = n("input_tokens") + cached + written;
  const output = n("output_tokens");
  return { input_tokens: input, cached_tokens: cached, cache_write_tokens: written, output_tokens: output, reasoning_tokens: 0, total_tokens: input + output };
}

/** The largest window among the models the CLI used (its main model's; helpers such as a small fast model have smaller ones). */
function contextWindowOf(modelUsage: unknown): number | undefined {
  if (!modelUsage || typeof modelUsage !== "object") return undefined;
  const windows = Object.values(modelUsage as Record<string, Json>).map((m) => m?.contextWindow).filter((w): w is number => typeof w === "number" && w > 0);
  return windows.length ? Math.max(...windows) : undefined;
}

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined ? "" : JSON.stringify(content);
  return content.map((part: Json) => (part?.type === "text" && typeof part.text === "string" ? part.text : JSON.stringify(part))).join("\n");
}
