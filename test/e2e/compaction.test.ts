import { test } from "node:test";
import assert from "node:assert/strict";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";
import { runScript, startStdio } from "./stdio-client.js";

const server = useMockLLMServer();

const HEAD = "[Keen compacted this conversation";
/** A tiny window: the system prompt and tools plus a few turns fill it. */
const config = (window: number) => ({
  providers: {
    anthropic: { models: { "claude-test": { contextWindow: window, maxOutputTokens: 100 } } },
    openai: { models: { "gpt-4.1": { contextWindow: window, maxOutputTokens: 100 } } },
  },
  compaction: { keepTokens: 700 },
});
const long = (tag: string) => `${tag} ${"lorem ipsum dolor ".repeat(60)}`;

function textOf(message: any): string {
  if (typeof message.content === "string") return message.content;
  return (message.content ?? []).map((b: any) => (b.type === "text" ? b.text : "")).join("");
}
const isSummaryRequest = (r: { body: any }) => JSON.stringify(r.body.system ?? r.body.messages?.[0] ?? "").includes("You summarise");
/**
 * Every turn here only talks: --sandbox off, since no tool runs and a turn with bash available
 * warms the sandbox in the background (CPU the 30-turn session would pay on every turn).
 */
const OFF = ["--sandbox", "off"];
const mainRequests = () => server.requests.filter((r) => r.path.endsWith("/messages") && !isSummaryRequest(r));

/**
 * On this window the session compacts before turns 12 and 21 (and 30): 24 turns give two
 * compactions, so the first turn's memory survives a summary of a summary, with three turns of
 * margin; 30 turns only added a third compaction of the same kind, at 25% more turns.
 */
const TURNS = 24;

test(`a ${TURNS}-turn stdio session on a tiny window compacts twice; later requests carry summary, memory and recent turns; resume sends the same; headless survives`, async () => {
  const sb = makeSandbox(server.url, config(9_000));
  // Replies serve turns and summaries alike (the order of requests depends on the compaction points).
  for (let i = 1; i <= TURNS + 10; i++) server.enqueue({ text: `reply ${i}: ${"done. ".repeat(40)}<keen_memory>fact-${i}</keen_memory>` });
  const client = startStdio(["--model", "anthropic/claude-test", ...OFF], sb.env, sb.workspace, 120_000);
  for (let i = 1; i <= TURNS; i++) {
    client.send({ kind: "prompt", id: `p${i}`, text: long(`prompt-${i}`) });
    const r = await client.response(`p${i}`);
    assert.equal(r.ok, true, r.error);
  }
  client.send({ kind: "shutdown", id: "bye" });
  assert.equal((await client.exited).code, 0);
  const ends = client.lines.filter((l) => l.kind === "compaction" && l.phase === "end");
  assert.ok(ends.length >= 2, `compacted ${ends.length} times, not twice or more`);
  for (const end of ends) {
    assert.equal(end.trigger, "auto");
    assert.ok(end.tokens_after < end.tokens_before && !end.error, JSON.stringify(end));
  }
  assert.ok(client.lines.filter((l) => l.kind === "result").every((l) => l.status === "success"));

  const last = mainRequests().at(-1)!.body.messages;
  const summary = textOf(last[0]);
  assert.ok(summary.startsWith(HEAD), summary.slice(0, 200));
  assert.match(summary, /<keen_memory>fact-1<\/keen_memory>/, "the first turn's memory survives every compaction");
  const all = last.map(textOf).join("\n");
  assert.doesNotMatch(all, /prompt-1 /);
  assert.doesNotMatch(all, /prompt-10 /);
  assert.match(all, new RegExp(`prompt-${TURNS - 1} `), "the recent turn is verbatim");
  assert.match(textOf(last.at(-1)), new RegExp(`^prompt-${TURNS} `));

  const id = client.lines.find((l) => l.kind === "result")!.session_id;
  const stored = await sb.show(id);
  const replacement = stored.events.filter((e) => e.kind === "context-replacement").at(-1)!;
  assert.equal(replacement.messages[0].headless, true, "the summary carries the headless flag");
  // That `sessions show` marks the compaction and keeps the whole history: test/cli/compact.test.ts, in process.
  assert.ok(stored.events.some((e) => e.kind === "text" && e.role === "user" && e.content.startsWith("prompt-1 ")), "the store keeps the whole history");

  // Resume with --session: the request starts from the same summary and recent turns.
  server.reset();
  server.enqueue({ text: "resumed" });
  const resumed = await sb.run(["run", "--model", "anthropic/claude-test", ...OFF, "--session", id, "--format", "json", "one more"]);
  assert.equal(resumed.code, 0, resumed.stderr);
  const sent = server.requests[0]!.body.messages;
  assert.equal(textOf(sent[0]), textOf(replacement.messages[0]));
  // The live request ended with the last prompt; resumed, that turn's answer and the new prompt follow.
  assert.deepEqual(sent.slice(0, last.length).map(textOf), last.map(textOf));
  assert.equal(sent.length, last.length + 2);
  assert.doesNotMatch(sent.map(textOf).join("\n"), /prompt-1 /);
});

const overflows = [
  {
    name: "anthropic", model: "anthropic/claude-test", env: {},
    body: { type: "error", error: { type: "invalid_request_error", message: "prompt is too long: 250000 tokens > 200000 maximum" } },
  },
  {
    name: "openai", model: "openai/gpt-4.1", env: { OPENAI_API_KEY: "test-key" },
    body: { error: { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 250000 tokens.", type: "invalid_request_error", param: "messages", code: "context_length_exceeded" } },
  },
];

for (const p of overflows) {
  test(`${p.name}: a context-overflow error triggers one compaction and the turn then succeeds`, async () => {
    const sb = makeSandbox(server.url, config(200_000));
    // Two turns of history, then the one that overflows.
    server.enqueue({ text: "one" }, { text: "two" }, { kind: "http-error", status: 400, body: p.body }, { text: "THE SUMMARY" }, { text: "fits now" });
    const prompts = [{ kind: "prompt", id: 1, text: long("prompt-1") }, { kind: "prompt", id: 2, text: long("prompt-2") }];
    let lines: Record<string, any>[];
    if (p.name === "anthropic") {
      // History from one keen stdio; the overflowing turn in `keen run`, which also says so on stderr.
      const history = await runScript((args, options) => sb.run(args, { ...options, env: p.env }), ["--model", p.model, ...OFF], prompts);
      assert.equal(history.code, 0, history.stderr);
      assert.deepEqual([history.response(1).data.status, history.response(2).data.status], ["success", "success"]);
      const id = history.response(2).data.session_id;
      const third = await sb.run(["run", "--model", p.model, ...OFF, "--session", id, "--headless", "three"], { env: p.env });
      assert.equal(third.code, 0, third.stderr);
      assert.match(third.stderr, /keen: compacted the conversation \(overflow\)/);
      lines = parseLines(third.stdout);
    } else {
      // All three turns in one keen stdio (the run's note on stderr is the same for every provider).
      const all = await runScript((args, options) => sb.run(args, { ...options, env: p.env }), ["--model", p.model, ...OFF], [...prompts, { kind: "prompt", id: 3, text: "three" }]);
      assert.equal(all.code, 0, all.stderr);
      assert.deepEqual([1, 2, 3].map((id) => all.response(id).data.status), ["success", "success", "success"]);
      lines = all.lines.filter((l) => l.kind !== "response");
    }
    assert.deepEqual(lines.filter((l) => l.kind === "compaction").map((l) => [l.phase, l.trigger]), [["start", "overflow"], ["end", "overflow"]]);
    assert.equal(lines.filter((l) => l.kind === "result").at(-1)!.text, "fits now");
    const retried = server.requests.at(-1)!.body.messages;
    assert.match(JSON.stringify(retried), /THE SUMMARY/);
    assert.equal(server.pending(), 0);
  });
}

// An idle session's compaction (a failed summary, --instructions, what the next turn sends, the
// transcript) is checked in process: test/cli/compact.test.ts. Here, what needs processes.
test("sessions compact: a session another process is in a turn on is refused (exit 1); idle again, it compacts (exit 0)", async () => {
  const sb = makeSandbox(server.url, { ...config(200_000), compaction: { keepTokens: 10 } });
  server.enqueue({ text: "one <keen_memory>kept-fact</keen_memory>" }, { text: "slow reply that never ends", stallAfterChunks: 5 });
  const client = startStdio(["--model", "anthropic/claude-test", ...OFF], sb.env, sb.workspace);
  client.send({ kind: "prompt", id: "p1", text: long("prompt-1") });
  const first = await client.response("p1");
  assert.equal(first.ok, true, first.error);
  const id = first.data.session_id;
  client.send({ kind: "prompt", id: "p", text: "hang" });
  await client.next((l) => l.kind === "text" && l.role === "user" && l.content === "hang");
  // The turn holds the session's claim from before its user text until its result: no wait needed.
  const busy = await sb.run(["sessions", "compact", id]);
  assert.equal(busy.code, 1);
  assert.match(busy.stderr, /busy/);
  client.send({ kind: "interrupt", id: "i" });
  await client.response("p");
  client.send({ kind: "shutdown", id: "s" });
  assert.equal((await client.exited).code, 0);

  server.enqueue({ text: "MANUAL SUMMARY" });
  // Idle again: through main() in this process (a Keen start less); the refusal above is the real process's.
  const ok = await sb.main(["sessions", "compact", id]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stderr, /compacted session/);
  assert.ok((await sb.show(id)).events.some((e) => e.kind === "context-replacement"));
  assert.deepEqual(server.unexpected, []);
});
