import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { EventDraft } from "../../protocol/events.js";
import { createCliTranslator, usageOf } from "../../app/agent/cli-stream.js";
import { cliArgs, cliModel, permissionModeFor, storedCliSession } from "../../app/agent/cli-backend.js";
import { runStep } from "../../app/agent/step.js";
import { cliCallView } from "../../app/agent/cli-tools.js";
import { AnthropicStreamState, type AnthropicStreamEvent } from "../../app/providers/anthropic-stream.js";
import type { Provider, ProviderEvent } from "../../protocol/provider.js";

const FIXTURES = join(import.meta.dirname, "../fixtures/claude-stream-json");

async function translate(name: string) {
  const events: EventDraft[] = [];
  const skipped: string[] = [];
  const t = createCliTranslator(async (e) => void events.push(e), (line) => skipped.push(line));
  for (const line of readFileSync(join(FIXTURES, `${name}.jsonl`), "utf8").split("\n")) await t.line(line);
  await t.finish();
  return { events, skipped, result: t.result, sessionId: t.sessionId };
}

/** An event as a short string: kind plus the one field that says what it carries. */
function brief(e: EventDraft): string {
  const x = e as Record<string, unknown>;
  const detail = x.delta ?? x.content ?? x.result ?? x.tool_name;
  return detail === undefined ? String(x.kind) : `${String(x.kind)}:${String(detail)}`;
}

test("thinking and text: deltas stream, complete blocks follow once per message", async () => {
  const { events, result, sessionId } = await translate("text-thinking");
  const kinds = events.map(brief);
  const deltas = kinds.filter((k) => k.startsWith("thinking-delta:") || k.startsWith("text-delta:"));
  assert.equal(deltas.filter((k) => k.startsWith("text-delta:")).map((k) => k.slice(11)).join(""), "Hello! How can I help you today?");
  assert.deepEqual(kinds.filter((k) => !deltas.includes(k)), [
    "thinking-start", "thinking-end", "content-end",
    "thinking:The user wants a greeting. Keep it short.", "text:Hello! How can I help you today?",
  ]);
  assert.equal(sessionId, "71537ded-8c2b-44ed-a812-5bfc1d41c5c4");
  assert.equal(result?.status, "success");
  assert.equal(result?.text, "Hello! How can I help you today?");
});

test("a tool call: tool-use and tool-start, then the CLI's own tool result, then the answer", async () => {
  const { events, result } = await translate("tool-bash");
  assert.deepEqual(events.map(brief).filter((k) => !k.startsWith("text-delta")), [
    "tool-use:Bash", "tool-start:Bash", "tool-result:hi", "content-end", "text:The command printed: hi",
  ]);
  assert.equal((events[0] as { input: string }).input, '{"command":"echo hi"}');
  assert.equal(result?.numTurns, 2);
});

test("max turns: is_error with error_max_turns is status max_turns, no text", async () => {
  const { result } = await translate("max-turns");
  assert.equal(result?.status, "max_turns");
  assert.equal(result?.text, "");
  assert.deepEqual(result?.errors, ["Reached maximum number of turns (2)"]);
});

test("an error result is an error whatever its exit code", async () => {
  const { result } = await translate("error-result");
  assert.equal(result?.status, "error");
  assert.deepEqual(result?.errors, ["API Error: 500 overloaded"]);
});

test("noise: malformed and unknown lines are skipped, a repeated frame is emitted once, tool memory is filtered", async () => {
  const { events, skipped, result } = await translate("noisy");
  // A message that was not streamed (no stream_event lines): its frame's block goes out whole, as one delta.
  assert.deepEqual(events.map(brief), ["text-delta:Done.", "content-end", "text:Done.", "memory:user likes tea"]);
  assert.equal(skipped.length, 3);
  assert.equal(result?.text, "Done.");
  // What `keen run --headless` prints is these events serialised: the tag must not reach it.
  assert.ok(!JSON.stringify({ events, result }).includes("keen_memory"));
  assert.deepEqual(result?.usage, usageOf({ input_tokens: 10, cache_read_input_tokens: 5, cache_creation_input_tokens: 2, output_tokens: 3 }));
  assert.deepEqual(result?.usage, { input_tokens: 17, cached_tokens: 5, cache_write_tokens: 2, output_tokens: 3, reasoning_tokens: 0, total_tokens: 20 });
});

test("argv: model without its provider, session id or resume, modes mapped, skipPermissions only when set", () => {
  const base = { path: "claude", flags: ["--foo"], skipPermissions: false, model: "anthropic/claude-sonnet-4-5" };
  assert.equal(cliModel("anthropic/claude-sonnet-4-5"), "claude-sonnet-4-5");
  assert.deepEqual(cliArgs(base, { id: "u1" }, "auto"), [
    "-p", "--output-format", "stream-json", "--verbose", "--include-partial-messages", "--model", "claude-sonnet-4-5", "--session-id", "u1", "--foo",
  ]);
  assert.deepEqual(cliArgs({ ...base, skipPermissions: true, maxTurns: 3 }, { resume: "s1" }, "auto").slice(7), [
    "--resume", "s1", "--permission-mode", "bypassPermissions", "--dangerously-skip-permissions", "--max-turns", "3", "--foo",
  ]);
  assert.deepEqual(cliArgs({ ...base, flags: [], allowedTools: ["bash", "read_file", "WebFetch"], disallowedTools: ["write_file"] }, { id: "u" }, "ask").slice(9), [
    "--allowedTools", "Bash,Read,WebFetch", "--disallowedTools", "Write",
  ]);
  assert.equal(permissionModeFor("accept-edits", false), "acceptEdits");
  assert.equal(permissionModeFor("read-only", true), "plan");
  assert.equal(permissionModeFor("auto", false), undefined);
  const end = (id?: string) => ({ kind: "turn-end", conversation_id: "c", ts: 0, turn_id: "t", status: "success", steps: 1, ...(id ? { cli_session_id: id } : {}) }) as never;
  const start = (cwd: string) => ({ kind: "session-start", conversation_id: "c", ts: 0, cwd }) as never;
  assert.deepEqual(storedCliSession([end("a"), end(), end("b"), end()]), { id: "b" });
  assert.deepEqual(storedCliSession([start("/a"), end("a"), start("/b"), end("b"), start("/c"), end()]), { id: "b", cwd: "/b" });
  assert.equal(storedCliSession([]), undefined);
});

test("askFirst: tool-start waits for an allow, never follows a denial, and precedes a result nobody was asked about", async () => {
  const lines = readFileSync(join(FIXTURES, "tool-bash.jsonl"), "utf8").split("\n");
  const resultAt = lines.findIndex((l) => l.includes('"tool_result"'));
  const run = async (answer?: boolean) => {
    const events: EventDraft[] = [];
    const t = createCliTranslator(async (e) => void events.push(e), undefined, true);
    const announced = t.toolUse("toolu_395138d655d37187c8d5e47b");
    for (const line of lines.slice(0, resultAt)) await t.line(line);
    await announced;
    if (answer !== undefined) await t.decided("toolu_395138d655d37187c8d5e47b", answer);
    const before = events.map((e) => e.kind).filter((k) => k.startsWith("tool"));
    for (const line of lines.slice(resultAt)) await t.line(line);
    return { before, after: events.map((e) => e.kind).filter((k) => k.startsWith("tool")) };
  };
  assert.deepEqual(await run(true), { before: ["tool-use", "tool-start"], after: ["tool-use", "tool-start", "tool-result"] });
  assert.deepEqual(await run(false), { before: ["tool-use"], after: ["tool-use", "tool-result"] });
  assert.deepEqual(await run(), { before: ["tool-use"], after: ["tool-use", "tool-start", "tool-result"] });
});

test("one turn contract: a message of the CLI's stream gives the events an embedded step gives for the same Anthropic stream", async () => {
  for (const name of ["text-thinking", "tool-bash"]) {
    const lines = readFileSync(join(FIXTURES, `${name}.jsonl`), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    // The first message's stream events, as the Anthropic API would have sent them to the provider.
    const stream = lines.filter((l) => l.type === "stream_event").map((l) => l.event as AnthropicStreamEvent);
    const first = stream.slice(0, stream.findIndex((e) => e.type === "message_stop") + 1);
    const provider: Provider = {
      providerId: "anthropic", model: "m",
      async *stream(): AsyncIterable<ProviderEvent> {
        const state = new AnthropicStreamState();
        for (const event of first) yield* state.handle(event);
        yield { type: "done", message: state.message(), usage: state.usage(), stopReason: state.stopReason };
      },
    };
    const embedded: EventDraft[] = [];
    await runStep({
      provider, request: { system: "", messages: [], tools: [], sessionId: "s" }, signal: new AbortController().signal,
      retry: { maxRetries: 0, maxWaitMs: 1, idleTimeoutMs: 5000, baseDelayMs: 1 }, emit: async (e) => void embedded.push(e),
      describe: (toolName, input) => cliCallView(toolName, input),
    });
    const cli: EventDraft[] = [];
    const t = createCliTranslator(async (e) => void cli.push(e), undefined, true);
    for (const line of lines.slice(0, lines.findIndex((l) => l.type === "stream_event" && (l.event as { type: string }).type === "message_stop") + 1)) {
      await t.line(JSON.stringify(line));
    }
    assert.ok(embedded.some((e) => e.kind === "text" || e.kind === "tool-use"), name);
    assert.deepEqual(cli, embedded, name);
  }
});
