import { test } from "node:test";
import assert from "node:assert/strict";
import { type MockReplyStep } from "../fakes/mock-llm-server.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";
import { assertProtocolStream, joinDeltas } from "./protocol-check.js";

const server = useMockLLMServer();

const VISIBLE = "It printed found.\n";
const INNER = "- MEMO-7f3: `echo found` works in this workspace";
const BLOCK = `<keen_memory>\n${INNER}\n</keen_memory>`;
const RAW = VISIBLE + BLOCK;
/** Both tags split inside, at odd places. */
const SPLIT_DELTAS = ["It printed ", "found.\n<", "keen_m", "emory>\n- MEMO", "-7f3: `echo found` works in this workspace\n</keen_memo", "ry", ">"];

const providers = [
  { name: "anthropic", model: "anthropic/claude-test", env: {} },
  { name: "openai", model: "openai/gpt-4.1", env: { OPENAI_API_KEY: "test-key" } },
];

/** Turn 1: a tool call, then an answer ending with the memory block. */
function enqueueToolTurn(answer: Partial<MockReplyStep>) {
  server.enqueue(
    { text: "Let me check.", toolCalls: [{ name: "bash", input: { command: "echo found" } }] },
    answer,
  );
}

/** The text of a vendor message, whether `content` is a string or blocks. */
function textOf(message: any): string {
  if (typeof message.content === "string") return message.content;
  return (message.content ?? []).map((b: any) => (b.type === "text" ? b.text : "")).join("");
}

function assertHidden(output: string, where: string) {
  assert.doesNotMatch(output, /keen_mem/, `${where} shows a memory tag`);
  assert.ok(!output.includes("MEMO-7f3"), `${where} shows the memory content`);
}

for (const p of providers) {
  test(`${p.name}: no output format shows the memory block; a memory line carries it; storage keeps it raw`, async () => {
    const sb = makeSandbox(server.url);
    const run = (args: string[]) => sb.run(["run", "--model", p.model, ...args], { env: p.env });

    enqueueToolTurn({ text: RAW, chunkSize: 3 });
    const text = await run(["--format", "text", "check it"]);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout, VISIBLE);

    enqueueToolTurn({ text: RAW, chunkSize: 3 });
    const json = await run(["--format", "json", "check it"]);
    assert.equal(json.code, 0, json.stderr);
    const result = JSON.parse(json.stdout);
    assert.equal(result.text, VISIBLE.trimEnd(), "no whitespace left where the block was");
    assertHidden(json.stdout, "--format json");

    enqueueToolTurn({ deltas: SPLIT_DELTAS });
    const headless = await run(["--headless", "--stream-deltas", "check it"]);
    assert.equal(headless.code, 0, headless.stderr);
    const lines = parseLines(headless.stdout);
    const end = assertProtocolStream(lines, { deltas: true });
    const memory = lines.filter((l) => l.kind === "memory");
    assert.deepEqual(memory.map((l) => l.content), [INNER]);
    for (const l of lines.filter((l) => l.kind !== "memory")) assertHidden(JSON.stringify(l), `a ${l.kind} line`);
    assert.equal(joinDeltas(lines, "text-delta"), `Let me check.${VISIBLE}`);
    assert.equal(end.text, VISIBLE.trimEnd());
    const texts = lines.filter((l) => l.kind === "text");
    assert.ok(memory[0]!.seq > texts.at(-1)!.seq, "memory follows the step's text");

    // Storage keeps the raw assistant message, block included.
    const { events } = await sb.show(end.session_id);
    const raw = events.filter((e) => e.kind === "assistant-message").map((e) => textOf(e.message));
    assert.deepEqual(raw, ["Let me check.", RAW]);
    assert.deepEqual(server.unexpected, []);
    assert.deepEqual(server.rejected, []);
  });

  test(`${p.name}: turn 2 with --session sends the raw block back to the model`, async () => {
    const sb = makeSandbox(server.url);
    enqueueToolTurn({ text: RAW, chunkSize: 3 });
    const first = await sb.run(["run", "--model", p.model, "check it"], { env: p.env });
    assert.equal(first.code, 0, first.stderr);
    const [session] = await sb.sessions();
    server.enqueue({ text: "You ran echo." });
    const second = await sb.run(["run", "--session", session!.id, "--format", "json", "what did you learn?"], { env: p.env });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(JSON.parse(second.stdout).text, "You ran echo.");

    const body = server.requests.at(-1)!.body;
    assert.equal(server.requests.at(-1)!.vendor, p.name);
    const messages = body.messages.filter((m: any) => m.role !== "system");
    assert.deepEqual(messages.map((m: any) => m.role), ["user", "assistant", "user"]);
    assert.ok(textOf(messages[1]).endsWith(RAW), `assistant history: ${JSON.stringify(textOf(messages[1]))}`);
    assert.match(textOf(messages[2]), /what did you learn\?/);
    assert.equal(server.pending(), 0);
  });
}

test("the system prompt carries the tool-memory contract", async () => {
  for (const p of providers) {
    const sb = makeSandbox(server.url);
    server.reset();
    server.enqueue({ text: "Hi." });
    const r = await sb.run(["run", "--model", p.model, "hello"], { env: p.env });
    assert.equal(r.code, 0, r.stderr);
    const body = server.requests[0]!.body;
    const system = p.name === "anthropic"
      ? (typeof body.system === "string" ? body.system : textOf({ content: body.system }))
      : textOf(body.messages.find((m: any) => m.role === "system"));
    assert.match(system, /<keen_memory>[\s\S]*<\/keen_memory>/);
    assert.match(system, /when this turn used one or more tools/i);
    assert.match(system, /never paste raw tool output/i);
    assert.match(system, /no such block/i);
  }
});

test("an unterminated block is hidden from its open tag on and never fails the turn", async () => {
  const sb = makeSandbox(server.url);
  enqueueToolTurn({ deltas: ["Done here.\n<keen_", "memory>\n- MEMO-7f3: half", " a note"] });
  const r = await sb.run(["run", "--model", "anthropic/claude-test", "--headless", "--stream-deltas", "check it"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  const result = assertProtocolStream(lines, { deltas: true });
  assert.equal(result.status, "success");
  assert.equal(result.text, "Done here.");
  for (const l of lines.filter((l) => l.kind !== "memory")) assertHidden(JSON.stringify(l), `a ${l.kind} line`);
  assert.deepEqual(lines.filter((l) => l.kind === "memory").map((l) => l.content), ["- MEMO-7f3: half a note"]);
});

test("text that only looks like a tag is shown as it is", async () => {
  const sb = makeSandbox(server.url);
  const text = "Compare <keen_mem and <keen_memory without a bracket, a < b, </keen_memory> alone.";
  server.enqueue({ deltas: text.split("") });
  const r = await sb.run(["run", "--model", "anthropic/claude-test", "--headless", "--stream-deltas", "say it"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  const result = assertProtocolStream(lines, { deltas: true });
  assert.equal(result.text, text);
  assert.deepEqual(lines.filter((l) => l.kind === "memory"), []);
});
