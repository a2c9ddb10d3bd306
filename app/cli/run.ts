import { statSync } from "node:fs";
import { resolve } from "node:path";
import { EventBus } from "../../protocol/bus.js";
import type { EventDraft, KeenEvent } from "../../protocol/events.js";
import { PROTOCOL_VERSION } from "../../protocol/kinds.js";
import type { Message } from "../../protocol/messages.js";
import type { RunResult } from "../../protocol/result.js";
import { newSessionId } from "../../storage/ids.js";
import { openStore } from "../../storage/level-store.js";
import { projectConversation } from "../../storage/projection.js";
import { createRecorder } from "../../storage/recorder.js";
import { SessionBusyError, UnknownSessionError, type SessionMeta, type SessionStatus } from "../../storage/store.js";
import { createMaxStepsPlanner } from "../agent/max-steps.js";
import { DEFAULT_RETRY } from "../agent/retry.js";
import { createStructuredOutput } from "../agent/structured-output.js";
import { buildSystemPrompt } from "../agent/system-prompt.js";
import { runTurn } from "../agent/turn.js";
import { createJsonOutput, createStderrReporter, createTextOutput } from "../headless/final-output.js";
import { createJsonlWriter } from "../headless/jsonl-writer.js";
import { createStreamSink } from "../headless/sink.js";
import { readPrompt } from "../headless/stdin.js";
import { createFileGuard } from "../permissions/file-guard.js";
import { createAutoApproveRequester } from "../permissions/requester.js";
import { createTools, toolEnv } from "../tools/index.js";
import { findWorkspace } from "../tools/workspace.js";
import { keenPaths, loadConfig } from "./config.js";
import { ExitError, UsageError } from "./errors.js";
import { chooseModel, createProvider } from "./provider-setup.js";
import { loadOutputSchema } from "./output-schema.js";
import { selectToolNames, validateRunFlags, type RunFlags } from "./run-flags.js";
import { createRunControl } from "./run-control.js";

/**
 * `keen run`: one turn, non-interactive. Everything that can fail before the
 * run starts is checked before a session is created or claimed, so a usage
 * error never leaves a half-written session. Returns the exit code.
 */
export async function runCommand(args: string[], flags: RunFlags, formatGiven: boolean): Promise<number> {
  const started = Date.now();
  const settings = validateRunFlags(flags, formatGiven);
  const paths = keenPaths();
  const store = openStore(paths.dataDir);
  let meta: SessionMeta | undefined;
  if (settings.session) {
    try {
      meta = await store.resolve(settings.session);
    } catch (error) {
      if (error instanceof UnknownSessionError) throw new UsageError(error.message);
      throw error;
    }
  }
  const cwd = resolve(settings.cwd ?? meta?.cwd ?? process.cwd());
  if (!isDirectory(cwd)) throw new UsageError(`working directory ${cwd} does not exist`);
  const workspace = findWorkspace(cwd);
  const config = loadConfig(paths, workspace);
  const choice = chooseModel(settings.model ?? meta?.model, config, process.env);
  const guard = createFileGuard({ workspace });
  const allTools = createTools({ cwd, workspace, guard, env: toolEnv(process.env) });
  const names = selectToolNames(
    allTools.map((t) => t.definition.name),
    settings.allowedTools ?? config.tools?.allowed,
    settings.disallowedTools ?? config.tools?.disallowed,
  );
  const tools = allTools.filter((t) => names.includes(t.definition.name));
  const schema = settings.outputSchema ? await loadOutputSchema(resolve(settings.outputSchema)) : undefined;
  const structured = schema ? createStructuredOutput(schema.schema, schema.check) : undefined;
  if (structured) tools.push(structured.tool);
  const maxTurns = settings.maxTurns ?? config.maxTurns;
  const { prompt, note } = await readPrompt(args, { skip: !settings.stdin, graceMs: config.stdinGraceMs ?? 3000, timeoutMs: settings.timeoutMs });
  if (note) process.stderr.write(`${note}\n`);
  if (!prompt.trim()) throw new UsageError('empty prompt: pass a message (keen run "…") or pipe one on stdin');

  const sessionId = meta?.id ?? newSessionId();
  const provider = await createProvider(choice, sessionId);
  const modelRef = `${choice.providerId}/${choice.model}`;
  let history: Message[] = [];
  if (meta) {
    await claim(store, sessionId);
    history = projectConversation(await store.load(sessionId));
    await store.updateMeta(sessionId, { status: "running", updated: Date.now(), model: modelRef, cwd });
  } else {
    const now = Date.now();
    await store.create({ id: sessionId, title: titleOf(prompt), cwd, model: modelRef, created: now, updated: now, status: "running" }, { claim: true });
  }

  const control = createRunControl(settings.timeoutMs, started);
  const bus = new EventBus((error) => process.stderr.write(`keen: an output failed: ${String(error)}\n`));
  const sink = createStreamSink(process.stdout, () => control.abort("epipe"));
  const recorder = createRecorder(store, sessionId, { onFailure: control.storeFailed });
  bus.subscribe(recorder.subscriber);
  bus.subscribe(createStderrReporter());
  if (settings.output === "jsonl") bus.subscribe(createJsonlWriter(sink, { deltas: settings.deltas }));
  else if (settings.output === "json") bus.subscribe(createJsonOutput(sink));
  else bus.subscribe(createTextOutput(sink));
  const emit = (draft: EventDraft) => bus.emit({ ...draft, conversation_id: sessionId, ts: Date.now() } as KeenEvent);

  let status: SessionStatus = "interrupted";
  try {
    await emit({
      kind: "session-start", model: modelRef, cwd, tools: tools.map((t) => t.definition.name), protocol_version: PROTOCOL_VERSION, resumed: Boolean(meta),
    });
    const outcome = await runTurn({
      sessionId, turnId: newSessionId(), provider, tools, history,
      system: buildSystemPrompt({ cwd, workspace, toolNames: names, extra: structured?.instructions }),
      user: { role: "user", content: [{ type: "text", text: prompt }], headless: true },
      emit, requester: createAutoApproveRequester(),
      retry: { ...DEFAULT_RETRY, ...config.retry }, signal: control.signal,
      planStep: maxTurns ? createMaxStepsPlanner(maxTurns, true, Boolean(structured)) : undefined,
      afterTools: structured?.afterTools, onAnswer: structured?.onAnswer,
    });
    const answer = structured ? structured.value() : undefined;
    const failure = structured && !answer ? (structured.failure() ?? "no structured_output value was produced") : undefined;
    const text = structured ? (answer ? JSON.stringify(answer.value) : "") : outcome.text;
    const verdict = control.verdict(failure && outcome.status === "success" ? "error" : outcome.status, text, failure);
    if (verdict.error) await emit({ kind: "error", message: verdict.error });
    const result: RunResult = {
      session_id: sessionId,
      opencode_session_id: sessionId.replaceAll("-", ""),
      text,
      status: verdict.status,
      is_error: verdict.isError,
      errors: verdict.error ? [...outcome.errors, verdict.error] : outcome.errors,
      num_turns: outcome.steps,
      duration_ms: Date.now() - started,
      usage: outcome.usage,
      ...(answer ? { structured_output: answer.value } : {}),
    };
    await emit({ kind: "result", ...result });
    status = verdict.status === "error" ? "failed" : verdict.status === "interrupted" ? "interrupted" : "idle";
    await sink.flush();
    return verdict.exitCode;
  } finally {
    control.dispose();
    await control.settle(recorder, () => store.release(sessionId, status));
  }
}

async function claim(store: ReturnType<typeof openStore>, id: string) {
  try {
    await store.claim(id);
  } catch (error) {
    if (error instanceof SessionBusyError) throw new ExitError(error.message, 1);
    throw error;
  }
}

function titleOf(prompt: string): string {
  const line = prompt.trim().split("\n")[0]!.trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
