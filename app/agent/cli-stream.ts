import type { EventDraft } from "../../protocol/events.js";
import type { Usage } from "../../protocol/messages.js";
import { MemoryFilter } from "./memory-filter.js";

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

/**
 * Translates the CLI's NDJSON, one line at a time, into Keen's events:
 * `stream_event` deltas stream as `text-delta` / `thinking-*` / `content-end`;
 * the complete `assistant` frames (one per content block, sharing
 * `message.id`) become `thinking`, `text`, `memory` and `tool-use`, emitted
 * once per message when it stops, as the embedded loop emits them; `user`
 * frames' `tool_result` blocks become `tool-result`; the `result` line ends it.
 * With `askFirst` (ask mode: the CLI asks Keen before it runs a tool), a
 * call's `tool-start` waits for the answer, as in the embedded loop: after an
 * allow (`decided`), or before its result when nobody was asked; never after a
 * denial. Contract: `line` never throws; malformed and unknown lines are skipped.
 */
export function createCliTranslator(emit: (event: EventDraft) => Promise<void>, debug?: (line: string) => void, askFirst = false) {
  let sessionId: string | undefined;
  let tools: string[] = [];
  let result: CliResult | undefined;
  /** Complete entries of the message in flight, emitted when it stops. */
  let complete: EventDraft[] = [];
  const seen = new Set<string>();
  const toolNames = new Map<string, string>();
  /** The streaming block: its kind and, for text, its memory filter. */
  let block: { kind: "text"; filter: MemoryFilter; emitted: boolean } | { kind: "thinking" } | undefined;
  let texts: string[] = [];
  /** The raw usage of the main model's request in flight (message_start, updated by message_delta). */
  let requestUsage: Json | undefined;
  /** Calls emitted as tool-use whose tool-start waits for the user's answer (askFirst). */
  const unstarted = new Map<string, string>();
  const announced = new Set<string>();
  const waiting = new Map<string, (() => void)[]>();
  /** When each call's tool-start went out, for the result's `duration_ms`. */
  const startedAt = new Map<string, number>();

  async function flushComplete(): Promise<void> {
    const pending = complete;
    complete = [];
    for (const event of pending) {
      await emit(event);
      if (event.kind === "tool-start") startedAt.set(event.tool_call_id, Date.now());
      if (event.kind !== "tool-use") continue;
      announced.add(event.tool_call_id);
      for (const wake of waiting.get(event.tool_call_id) ?? []) wake();
      waiting.delete(event.tool_call_id);
    }
  }

  async function start(id: string): Promise<void> {
    const name = unstarted.get(id);
    if (name === undefined) return;
    unstarted.delete(id);
    await emit({ kind: "tool-start", role: "assistant", tool_name: name, tool_call_id: id });
    startedAt.set(id, Date.now());
  }

  async function streamEvent(event: Json): Promise<void> {
    switch (event.type) {
      case "content_block_start": {
        const type = (event.content_block as Json | undefined)?.type;
        if (type === "text") block = { kind: "text", filter: new MemoryFilter(), emitted: false };
        else if (type === "thinking") {
          block = { kind: "thinking" };
          await emit({ kind: "thinking-start", role: "assistant", attempt: 1 });
        } else block = undefined;
        return;
      }
      case "content_block_delta": {
        const delta = event.delta as Json | undefined;
        if (delta?.type === "text_delta" && block?.kind === "text" && typeof delta.text === "string") {
          const visible = block.filter.push(delta.text);
          if (visible) {
            block.emitted = true;
            await emit({ kind: "text-delta", role: "assistant", attempt: 1, delta: visible });
          }
        } else if (delta?.type === "thinking_delta" && typeof delta.thinking === "string") {
          await emit({ kind: "thinking-delta", role: "assistant", attempt: 1, delta: delta.thinking });
        }
        return;
      }
      case "content_block_stop": {
        if (block?.kind === "text") {
          const tail = block.filter.flush();
          if (tail) await emit({ kind: "text-delta", role: "assistant", attempt: 1, delta: tail });
          if (tail || block.emitted) await emit({ kind: "content-end", role: "assistant", attempt: 1 });
        } else if (block?.kind === "thinking") await emit({ kind: "thinking-end", role: "assistant", attempt: 1 });
        block = undefined;
        return;
      }
      case "message_start": {
        const usage = (event.message as Json | undefined)?.usage;
        if (usage && typeof usage === "object") requestUsage = { ...(usage as Json) };
        return;
      }
      case "message_delta":
        // Final counts of the request; a field it leaves out keeps message_start's.
        if (requestUsage && event.usage && typeof event.usage === "object") requestUsage = { ...requestUsage, ...(event.usage as Json) };
        return;
      case "message_stop":
        return flushComplete();
    }
  }

  function assistantFrame(message: Json): void {
    const id = typeof message.id === "string" ? message.id : "";
    const content = Array.isArray(message.content) ? (message.content as Json[]) : [];
    content.forEach((part, index) => {
      // The CLI may repeat a frame: one entry per (message, block).
      const key = `${id}\0${part.type}\0${typeof part.id === "string" ? part.id : index}\0${typeof part.text === "string" ? part.text : ""}`;
      if (seen.has(key)) return;
      seen.add(key);
      if (part.type === "thinking" && typeof part.thinking === "string" && part.thinking) {
        complete.push({ kind: "thinking", role: "assistant", content: part.thinking });
      } else if (part.type === "text" && typeof part.text === "string") {
        const filter = new MemoryFilter();
        const visible = filter.push(part.text) + filter.flush();
        if (visible) {
          texts.push(visible);
          complete.push({ kind: "text", role: "assistant", content: visible });
        }
        const memory = filter.memory();
        if (memory !== undefined) complete.push({ kind: "memory", role: "assistant", content: memory });
      } else if (part.type === "tool_use" && typeof part.id === "string") {
        const name = typeof part.name === "string" ? part.name : "unknown";
        toolNames.set(part.id, name);
        complete.push({ kind: "tool-use", role: "assistant", tool_name: name, tool_call_id: part.id, input: JSON.stringify(part.input ?? {}) });
        // The CLI runs its own tools: the call starts as soon as it is complete, unless the CLI will ask first.
        if (askFirst) unstarted.set(part.id, name);
        else complete.push({ kind: "tool-start", role: "assistant", tool_name: name, tool_call_id: part.id });
      }
    });
  }

  async function userFrame(message: Json): Promise<void> {
    await flushComplete();
    const content = Array.isArray(message.content) ? (message.content as Json[]) : [];
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
    await flushComplete();
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
      ...(requestUsage ? { lastUsage: usageOf(requestUsage) } : {}),
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
          if (json.message && typeof json.message === "object") assistantFrame(json.message as Json);
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
    /** Emits complete entries still held (a stream cut before its message stopped). */
    finish: flushComplete,
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
