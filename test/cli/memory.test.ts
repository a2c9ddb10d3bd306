import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { JsonlLineSchema } from "../../protocol/jsonl.js";
import { openStore } from "../../storage/level-store.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";
import { BLOCK_PARTS, INNER, RAW, SPLIT_DELTAS, VISIBLE, assertHidden, textOf } from "./memory-checks.js";

// The tool-memory block (<keen_memory>) through `keen run` in this process (test/cli/in-process.ts),
// for both vendors: hidden from every output format, carried by the memory line, stored raw and sent
// back raw; the system prompt's contract; unterminated and look-alike tags. The tool turn calls
// read_file, which runs in this process (a unit test spawns nothing). test/e2e/memory.test.ts keeps
// the real process with bash turns and the protocol stream checked against the published schema.

const server = useMockLLMServer();

const providers = [
  { name: "anthropic", model: "anthropic/claude-test", env: {} },
  { name: "openai", model: "openai/gpt-4.1", env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: undefined as string | undefined } },
];

function sandbox(p: (typeof providers)[number]) {
  const sb = makeInProcessSandbox(server);
  writeFileSync(join(sb.workspace, "found.txt"), "found\n");
  const env = p.name === "openai" ? { ...p.env, OPENAI_BASE_URL: server.openaiBaseURL } : p.env;
  /** `keen run --no-stdin --sandbox off --model …`: read_file runs in process, no sandbox plays a role. */
  const run = (args: string[]) => sb.keen(["run", "--no-stdin", "--sandbox", "off", "--model", p.model, ...args], { env });
  return { ...sb, run };
}

/** Turn 1: a tool call, then an answer ending with the memory block. */
function enqueueToolTurn(answer: Record<string, unknown>) {
  server.enqueue({ text: "Let me check.", toolCalls: [{ name: "read_file", input: { path: "found.txt" } }] }, answer);
}

/** The JSONL lines of a headless run, each valid against the protocol's zod definition. */
function jsonl(stdout: string): Record<string, any>[] {
  const lines = stdout.trim().split("\n").map((l) => JSON.parse(l));
  for (const line of lines) assert.ok(JsonlLineSchema.safeParse(line).success, JSON.stringify(line));
  assert.deepEqual(lines.map((l) => l.seq), lines.map((_, i) => i));
  assert.equal(lines.at(-1).kind, "result");
  return lines;
}

const deltas = (lines: Record<string, any>[]) => lines.filter((l) => l.kind === "text-delta").map((l) => l.delta).join("");

for (const p of providers) {
  test(`${p.name}: no output format shows the memory block; a memory line carries it; storage keeps it raw`, async () => {
    const sb = sandbox(p);
    enqueueToolTurn({ text: RAW, chunkSize: 3 });
    const text = await sb.run(["--format", "text", "check it"]);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout, VISIBLE);

    enqueueToolTurn({ text: RAW, chunkSize: 3 });
    const json = await sb.run(["--format", "json", "check it"]);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(JSON.parse(json.stdout).text, VISIBLE.trimEnd(), "no whitespace left where the block was");
    assertHidden(json.stdout, "--format json");

    enqueueToolTurn({ deltas: SPLIT_DELTAS });
    const headless = await sb.run(["--headless", "--stream-deltas", "check it"]);
    assert.equal(headless.code, 0, headless.stderr);
    const lines = jsonl(headless.stdout);
    const memory = lines.filter((l) => l.kind === "memory");
    assert.deepEqual(memory.map((l) => l.content), [INNER]);
    for (const l of lines.filter((l) => l.kind !== "memory")) assertHidden(JSON.stringify(l), `a ${l.kind} line`);
    assert.equal(deltas(lines), `Let me check.${VISIBLE}`);
    assert.equal(lines.at(-1)!.text, VISIBLE.trimEnd());
    assert.ok(memory[0]!.seq > lines.filter((l) => l.kind === "text").at(-1)!.seq, "memory follows the step's text");

    const events = await openStore(sb.home).load(lines.at(-1)!.session_id);
    assert.deepEqual(events.filter((e: any) => e.kind === "assistant-message").map((e: any) => textOf(e.message)), ["Let me check.", RAW]);
    assert.deepEqual(server.unexpected, []);
    assert.deepEqual(server.rejected, []);
  });

  test(`${p.name}: turn 2 with --session sends the raw block back to the model; the system prompt carries the contract`, async () => {
    const sb = sandbox(p);
    enqueueToolTurn({ text: RAW, chunkSize: 3 });
    const first = await sb.run(["check it"]);
    assert.equal(first.code, 0, first.stderr);
    const body0 = server.requests[0]!.body;
    const system = p.name === "anthropic"
      ? (typeof body0.system === "string" ? body0.system : textOf({ content: body0.system }))
      : textOf(body0.messages.find((m: any) => m.role === "system"));
    for (const part of BLOCK_PARTS) assert.match(system, part);
    const [session] = await sb.sessions();
    server.enqueue({ text: "You ran echo." });
    const second = await sb.run(["--session", session!.id, "--format", "json", "what did you learn?"]);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(JSON.parse(second.stdout).text, "You ran echo.");
    assert.equal(server.requests.at(-1)!.vendor, p.name);
    const messages = server.requests.at(-1)!.body.messages.filter((m: any) => m.role !== "system");
    assert.deepEqual(messages.map((m: any) => m.role), ["user", "assistant", "user"]);
    assert.ok(textOf(messages[1]).endsWith(RAW), `assistant history: ${JSON.stringify(textOf(messages[1]))}`);
    assert.match(textOf(messages[2]), /what did you learn\?/);
    assert.equal(server.pending(), 0);
  });
}

test("an unterminated block is hidden from its open tag on and never fails the turn", async () => {
  const sb = sandbox(providers[0]!);
  enqueueToolTurn({ deltas: ["Done here.\n<keen_", "memory>\n- MEMO-7f3: half", " a note"] });
  const r = await sb.run(["--headless", "--stream-deltas", "check it"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = jsonl(r.stdout);
  assert.equal(lines.at(-1)!.status, "success");
  assert.equal(lines.at(-1)!.text, "Done here.");
  for (const l of lines.filter((l) => l.kind !== "memory")) assertHidden(JSON.stringify(l), `a ${l.kind} line`);
  assert.deepEqual(lines.filter((l) => l.kind === "memory").map((l) => l.content), ["- MEMO-7f3: half a note"]);
});

test("text that only looks like a tag is shown as it is", async () => {
  const sb = sandbox(providers[0]!);
  const text = "Compare <keen_mem and <keen_memory without a bracket, a < b, </keen_memory> alone.";
  server.enqueue({ deltas: text.split("") });
  const r = await sb.run(["--headless", "--stream-deltas", "say it"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = jsonl(r.stdout);
  assert.equal(lines.at(-1)!.text, text);
  assert.equal(deltas(lines), text);
  assert.deepEqual(lines.filter((l) => l.kind === "memory"), []);
});
