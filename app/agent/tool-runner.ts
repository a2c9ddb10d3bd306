import type { ContentBlock } from "../../protocol/messages.js";
import type { EventDraft } from "../../protocol/events.js";
import { callView, type SubagentHost, type Tool, type ToolPreview, type ToolResult } from "../tools/tool.js";
import type { PermissionRequester } from "../permissions/requester.js";

/** A tool call the model made in one step. */
export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
  /** Set when the input could not be used (see tool-input.ts): the call is answered with this error, never run. */
  invalid?: string;
}

/** What the runner needs from its surroundings. */
export interface ToolRunnerOptions {
  tools: Tool[];
  requester: PermissionRequester;
  emit: (event: EventDraft) => Promise<void>;
  signal: AbortSignal;
  /** Calls listed here are reported but not executed (e.g. tools disabled on the final step). */
  refuse?: (call: ToolCall) => string | undefined;
  /** The child loop a call may run (the `task` tool), given the call's id and the step's tools; absent: none. */
  subagents?: (callId: string, tools: Tool[]) => SubagentHost;
}

const TAIL_BYTES = 4096;
const UPDATE_INTERVAL_MS = 100;

/** How many calls of `concurrent` tools (subagents) one step runs at the same time. */
export const MAX_CONCURRENT_CALLS = 3;

/**
 * Runs one step's tool calls in order, except that calls of `concurrent` tools (Tool.concurrent:
 * subagents) start without waiting for each other, at most MAX_CONCURRENT_CALLS at once; a call
 * of any other tool waits until those before it have ended, so no ordinary call overlaps another.
 * Contract: never throws; every call gets exactly one `tool-result` event and one result block,
 * in the order of the calls, a throwing tool becoming an error result written for the model.
 */
export async function runToolCalls(calls: ToolCall[], options: ToolRunnerOptions): Promise<ContentBlock[]> {
  const blocks: ContentBlock[] = new Array(calls.length);
  const running = new Set<Promise<void>>();
  for (const [i, call] of calls.entries()) {
    const work = () => runAndReport(call, options).then((block) => void (blocks[i] = block));
    const concurrent = !call.invalid && options.tools.find((t) => t.definition.name === call.name)?.concurrent;
    if (!concurrent) {
      await Promise.all(running);
      await work();
      continue;
    }
    while (running.size >= MAX_CONCURRENT_CALLS) await Promise.race(running);
    const started: Promise<void> = work().finally(() => running.delete(started));
    running.add(started);
  }
  await Promise.all(running);
  return blocks;
}

/** Runs one call and reports it: its `tool-result` (and `plan-update`) event, and its block for the model. */
async function runAndReport(call: ToolCall, options: ToolRunnerOptions): Promise<ContentBlock> {
  const timing: { started?: number } = {};
  const result = options.signal.aborted
    ? { content: "Not executed: the run was interrupted.", is_error: true }
    : await runOne(call, options, timing);
  // An error result once the run is aborted is the interrupt's doing, not the tool's failure.
  const interrupted = result.is_error && options.signal.aborted;
  await options.emit({
    kind: "tool-result", role: "assistant", tool_name: call.name, tool_call_id: call.id,
    result: result.content, is_error: result.is_error, ...(result.details ? { details: result.details } : {}),
    ...(interrupted ? { interrupted: true as const } : {}),
    ...(timing.started !== undefined ? { duration_ms: Date.now() - timing.started } : { not_run: true as const }),
  });
  // After its result, so a UI has the call's line before the plan it changed.
  if (result.plan && !result.is_error) await options.emit({ kind: "plan-update", role: "assistant", tool_call_id: call.id, entries: result.plan });
  if (result.skill && !result.is_error) await options.emit({ kind: "skill-loaded", role: "assistant", tool_call_id: call.id, name: result.skill.name, path: result.skill.path });
  return {
    type: "tool_result", tool_call_id: call.id, content: result.content, is_error: result.is_error,
    ...(result.images?.length ? { images: result.images } : {}),
  };
}

/** Runs one call; `timing.started` is set when the tool itself began (after any permission wait). */
async function runOne(call: ToolCall, options: ToolRunnerOptions, timing: { started?: number }): Promise<ToolResult> {
  if (call.invalid) return { content: call.invalid, is_error: true };
  const refusal = options.refuse?.(call);
  if (refusal) return { content: refusal, is_error: true };
  const tool = options.tools.find((t) => t.definition.name === call.name);
  if (!tool) {
    const names = options.tools.map((t) => t.definition.name).join(", ");
    return { content: `Unknown tool "${call.name}". Available tools: ${names || "none"}.`, is_error: true };
  }
  const view = callView(tool, call.input);
  const asked = { tool: call.name, kind: view.tool_kind, mutates: view.mutates, ...(tool.sandboxed ? { sandboxed: true } : {}) };
  const preview = options.requester.wantsPreview?.(asked) ? await previewOf(tool, call.input) : undefined;
  const describe = async (input: unknown) => {
    const seen = callView(tool, input);
    return { view: seen, summary: `${call.name}: ${seen.title}`, preview: await previewOf(tool, input) };
  };
  const decision = await options.requester.request(
    { ...asked, view, input: call.input, summary: `${call.name}: ${view.title}`, callId: call.id, preview, describe }, options.signal,
  );
  if (!decision.allow) return { content: decision.reason, is_error: true };
  // A PreToolUse hook may have rewritten the input; PostToolUse hooks see the result (both through the requester).
  const input = decision.input ?? call.input;
  const result = await runAllowed(tool, call, input, options, timing);
  const ran = timing.started !== undefined;
  return ran && options.requester.afterTool ? options.requester.afterTool({ tool: call.name, callId: call.id, input }, result, options.signal) : result;
}

async function runAllowed(tool: Tool, call: ToolCall, input: unknown, options: ToolRunnerOptions, timing: { started?: number }): Promise<ToolResult> {
  if (options.signal.aborted) return { content: "Not executed: the run was interrupted.", is_error: true };
  await options.emit({ kind: "tool-start", role: "assistant", tool_name: call.name, tool_call_id: call.id });
  timing.started = Date.now();
  const updates = createOutputThrottle((tail, total) => ({
    kind: "tool-update", role: "assistant", tool_name: call.name, tool_call_id: call.id, tail, total_bytes: total,
  }), options.emit);
  try {
    const view = callView(tool, input);
    const askHost = async (host: string, port: number | undefined, about?: { url?: string }) => {
      const where = port ? `${host.includes(":") ? `[${host}]` : host}:${port}` : host;
      // Named per host, so allow-always (a rule per name) covers this host only. A network tool's own
      // fetch (web_fetch) is a `web:` rule: allowing a host for it does not open it to sandboxed commands.
      const web = tool.kind === "network";
      return options.requester.request({
        tool: `${web ? "web" : "network"}:${where}`, input: { host, port, call: call.name, ...about },
        summary: `${call.name} connects to ${where}`, callId: call.id, network: true,
        ...(web ? { kind: "network" as const, view: { ...view, title: about?.url ? `Fetch ${about.url}` : view.title } } : {}),
      }, options.signal);
    };
    const subagent = options.subagents?.(call.id, options.tools);
    return await tool.run(input, { signal: options.signal, onOutput: updates.push, askHost, ...(subagent ? { subagent } : {}) });
  } catch (error) {
    return { content: `Tool ${call.name} failed: ${error instanceof Error ? error.message : String(error)}`, is_error: true };
  } finally {
    await updates.close();
  }
}

/** The change a write or edit would make, for a permission prompt; nothing when the tool cannot say. */
async function previewOf(tool: Tool, input: unknown): Promise<ToolPreview | undefined> {
  try {
    const preview = await tool.preview?.(input);
    return preview && typeof preview === "object" ? preview : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Emits a progress event (`tool-update`, `shell-update`) at most every 100 ms with a bounded tail of the output
 * (4 KiB), never the whole output again. Progress is a delta: never stored; the final result is the record.
 */
export function createOutputThrottle(update: (tail: string, total: number) => EventDraft, emit: (event: EventDraft) => Promise<void>) {
  let tail = "";
  let total = 0;
  let dirty = false;
  let last = 0;
  let timer: NodeJS.Timeout | undefined;
  let chain = Promise.resolve();
  const flush = () => {
    timer = undefined;
    if (!dirty) return;
    dirty = false;
    last = Date.now();
    const event = update(tail, total);
    chain = chain.then(() => emit(event)).catch(() => {});
  };
  return {
    push(chunk: string) {
      total += Buffer.byteLength(chunk);
      tail = lastBytes(tail + chunk, TAIL_BYTES);
      dirty = true;
      if (timer) return;
      timer = setTimeout(flush, Math.max(0, last + UPDATE_INTERVAL_MS - Date.now()));
    },
    async close() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      dirty = false;
      await chain;
    },
  };
}

/** The end of `text`, at most `max` UTF-8 bytes, never splitting a character. */
function lastBytes(text: string, max: number): string {
  if (text.length * 3 <= max) return text;
  const bytes = Buffer.from(text);
  if (bytes.length <= max) return text;
  let start = bytes.length - max;
  while ((bytes[start]! & 0xc0) === 0x80) start++;
  return bytes.subarray(start).toString();
}
