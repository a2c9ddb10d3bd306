import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { commandJsonSchema, type Command } from "../../protocol/commands.js";
import { protocolJsonSchema } from "../../protocol/jsonl.js";
import { RESPONSE_DATA } from "../../protocol/responses.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines, waitForStdout } from "./harness.js";
import { kindSequence } from "./protocol-check.js";
import { runScript, startStdio, type ScriptRun } from "./stdio-client.js";

/*
 * The promises docs/PROTOCOL.md makes to a client of `keen stdio`, checked
 * the way a third-party client meets them: most clients here write all their
 * commands at once and close stdin, waiting for nothing.
 */
const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();

/** A sandbox with one stored session whose one turn wrote `a.txt` (something to undo and to compact). */
async function withSession(config: Record<string, unknown> = {}) {
  const sb = makeSandbox(server.url, config);
  server.enqueue({ toolCalls: [{ id: "w", name: "write_file", input: { path: "a.txt", content: "new\n" } }] }, { text: "Wrote a.txt." });
  const first = await sb.run(["run", "--model", MODEL, "--no-stdin", "--format", "json", "write a.txt"]);
  assert.equal(first.code, 0, first.stderr);
  return { sb, session: JSON.parse(first.stdout).session_id as string };
}

const script = (sb: ReturnType<typeof makeSandbox>, args: string[], commands: (Record<string, unknown> | string)[]) =>
  runScript(sb.run, ["--model", MODEL, ...args], commands);

/** Responses in the order written, as [id, command, ok]. */
const answers = (run: ScriptRun) => run.lines.filter((l) => l.kind === "response").map((l) => [l.id, l.command, l.ok]);

test("the kinds whose answer waits on work, each followed at once by EOF, are answered before the process exits (a prompt with its whole turn)", async () => {
  // Every kind is tried this way in-process (test/headless/stdio-eof.test.ts, through keen stdio's own
  // function); here the real process, stdin closed right after the command, for the kinds whose answer
  // comes after work the exit could cut short: a turn, a compaction, a shell command, shutdown.
  const { sb, session } = await withSession();
  const last: { args?: string[]; command: Command; mock?: Parameters<typeof server.enqueue>; check(r: Record<string, any>, run: ScriptRun): void }[] = [
    {
      command: { kind: "prompt", id: "p", text: "hi" }, mock: [{ text: "Hello there." }],
      check: (r, run) => {
        assert.deepEqual([r.ok, r.data.status], [true, "success"]);
        assert.deepEqual(kindSequence(run.lines), ["session-start", "text", "text-delta", "content-end", "text", "result", "response"]);
        assert.equal(run.lines.find((l) => l.kind === "result")!.text, "Hello there.");
      },
    },
    {
      args: ["--session", session], command: { kind: "shell", id: "s", command: "echo from-the-user; exit 3" },
      check: (r, run) => {
        assert.deepEqual([r.ok, r.data.session_id, r.data.exit_code, r.data.is_error], [true, session, 3, true]);
        const done = run.lines.find((l) => l.kind === "shell")!;
        assert.match(done.output, /from-the-user/);
        assert.deepEqual([done.command, done.exit_code, done.role], ["echo from-the-user; exit 3", 3, "user"]);
        assert.equal(run.lines.find((l) => l.kind === "shell-start")!.shell_id, done.shell_id);
      },
    },
    {
      args: ["--session", session], command: { kind: "compact", id: "c" }, mock: [{ text: "SUMMARY of the session" }],
      check: (r) => assert.deepEqual([r.ok, r.data.session_id, typeof r.data.tokens_after], [true, session, "number"]),
    },
    { command: { kind: "shutdown", id: "s" }, check: (r) => assert.equal(r.ok, true) },
  ];
  // One process per case: each command must be the very last line before EOF.
  for (const { args = [], command, mock, check } of last) {
    if (mock) server.enqueue(...mock);
    const run = await script(sb, args, [command]);
    assert.equal(run.code, 0, `${command.kind}: ${run.stderr}`);
    const response = run.response(command.id!);
    check(response, run);
    if (response.ok) RESPONSE_DATA[command.kind].parse(response.data);
    assert.equal(run.lines.at(-1)!.kind, "response", `${command.kind}: the response is the last line`);
  }
  assert.equal(server.pending(), 0);
});

test("commands written back to back take effect in order, and each gets exactly one response", async () => {
  const { sb, session } = await withSession();
  server.enqueue({ text: "SUMMARY of the session" }, { text: "Going on." });
  const run = await script(sb, ["--session", session], [
    { kind: "list-sessions", id: 1 },
    { kind: "list-models", id: 2 },
    { kind: "set-permission-mode", id: 3, mode: "ask" },
    { kind: "permission-response", id: 4, request_id: "nope", decision: "deny" },
    { kind: "interrupt", id: 5 },
    { kind: "undo", id: 6 },
    { kind: "compact", id: 7 },
    { kind: "new-session", id: 8 },
    { kind: "resume-session", id: 9, session },
    { kind: "set-model", id: 10, model: "anthropic/claude-haiku-5-5" },
    { kind: "prompt", id: 11, text: "go on" },
    { kind: "new-session", id: 12 },
    { kind: "shutdown", id: 13 },
  ]);
  assert.equal(run.code, 0, run.stderr);
  const ok = answers(run).map(([id, , good]) => [id, good]).sort((a, b) => a[0] - b[0]);
  assert.deepEqual(ok, [[1, true], [2, true], [3, true], [4, false], [5, true], [6, true], [7, true], [8, true], [9, true], [10, true], [11, true], [12, false], [13, true]],
    "exactly one response per command");
  // The prompt ran after the resume, in the resumed session, with the model set after it and the compacted history.
  assert.deepEqual(run.response(11).data, { session_id: session, status: "success" });
  assert.notEqual(run.response(8).data.session_id, session);
  const sent = server.requests.at(-1)!.body;
  assert.equal(sent.model, "claude-haiku-5-5");
  assert.match(JSON.stringify(sent.messages), /SUMMARY of the session/);
  // new-session while the prompt's turn runs is refused; shutdown answers last, after the prompt's turn.
  assert.equal(run.response(12).error, "a turn is running: interrupt it first");
  assert.deepEqual([run.lines.at(-1)!.kind, run.lines.at(-1)!.id], ["response", 13]);
});

test("an interrupted turn keeps what streamed: result.text, a stored text marked interrupted, the replay, and the next turn's history", async () => {
  const sb = makeSandbox(server.url);
  // The answer stalls after three text chunks (Anthropic: message_start, ping and content_block_start come first) (as a slow model would), so the interrupt lands mid-answer however loaded the machine is.
  server.enqueue({ text: "Reading every file in turn, starting with the first one", chunkSize: 8, stallAfterChunks: 6 }, { text: "Going on from there." });
  const client = startStdio(["--model", MODEL], sb.env, sb.workspace);
  client.send({ kind: "prompt", id: "p1", text: "read them all" });
  await client.next((l) => l.kind === "text-delta");
  // Written at once after the interrupt: the next prompt and EOF.
  client.send({ kind: "interrupt", id: "i" });
  client.send({ kind: "prompt", id: "p2", text: "go on" });
  const { code, stderr } = await client.end();
  assert.equal(code, 0, stderr);
  const results = client.lines.filter((l) => l.kind === "result");
  const firstResult = client.lines.indexOf(results[0]!);
  const partial = client.lines.slice(0, firstResult).filter((l) => l.kind === "text-delta").map((l) => l.delta).join("");
  assert.ok(partial.length > 0 && partial.length < 55, partial);
  assert.deepEqual(results.map((r) => [r.status, r.text]), [["interrupted", partial], ["success", "Going on from there."]]);
  const cut = client.lines.find((l) => l.kind === "text" && l.role === "assistant" && l.interrupted)!;
  assert.equal(cut.content, partial);
  // The next turn's history holds the partial answer, closed with a marker.
  assert.deepEqual(server.requests[1]!.body.messages.map((m: { role: string; content: { text: string }[] }) => [m.role, m.content.map((b) => b.text).join("")]), [
    ["user", "read them all"], ["assistant", `${partial}\n\n[turn interrupted]`], ["user", "go on"],
  ]);
  // Stored: the text (marked), the raw assistant message and the turn's status; the replay shows it.
  const id = results[0]!.session_id;
  const { events } = await sb.show(id);
  const firstTurn = events.slice(0, events.findIndex((e) => e.kind === "turn-end") + 1);
  assert.deepEqual(firstTurn.filter((e) => e.role === "assistant" || e.kind.endsWith("-message") || e.kind === "turn-end").map((e) =>
    e.kind === "text" ? [e.kind, e.content, e.interrupted] : e.kind === "turn-end" ? [e.kind, e.status] : [e.kind, e.message.content[0]?.text]), [
    ["user-message", "read them all"], ["text", partial, true], ["assistant-message", partial], ["turn-end", "interrupted"],
  ]);
  const replay = parseLines((await sb.run(["sessions", "show", id, "--jsonl"])).stdout);
  assert.deepEqual(replay.filter((l) => l.kind === "text").map((l) => [l.role, l.content, l.interrupted]), [
    ["user", "read them all", undefined], ["assistant", partial, true], ["user", "go on", undefined], ["assistant", "Going on from there.", undefined],
  ]);
});

test("keen run, SIGINT mid-answer: the result's text is what had streamed, and it is stored", async () => {
  const sb = makeSandbox(server.url);
  // Stalls after two text chunks: the SIGINT lands mid-answer however loaded the machine is.
  server.enqueue({ text: "A long answer that is cut short by the user pressing Ctrl-C", chunkSize: 6, stallAfterChunks: 5 });
  const r = await sb.run(["run", "--headless", "--stream-deltas", "--model", MODEL, "--no-stdin", "talk"], {
    onSpawn: (child) => void waitForStdout(child, (s) => s.includes('"text-delta"')).then(() => child.kill("SIGINT"), () => {}),
  });
  assert.equal(r.code, 130, r.stderr);
  const lines = parseLines(r.stdout);
  const partial = lines.filter((l) => l.kind === "text-delta").map((l) => l.delta).join("");
  const result = lines.at(-1)!;
  assert.deepEqual([result.kind, result.status, result.text], ["result", "interrupted", partial]);
  assert.ok(partial.length > 0);
  const { events } = await sb.show(result.session_id);
  assert.deepEqual(events.filter((e) => e.kind === "text" && e.role === "assistant").map((e) => [e.content, e.interrupted]), [[partial, true]]);
});

test("set-permission-mode never goes wider than --permission-mode or the user config's mode; unset, a client may widen it", async () => {
  const sb = makeSandbox(server.url);
  const bash = () => server.enqueue({ toolCalls: [{ id: "b", name: "bash", input: { command: "echo ran" } }] }, { text: "done" });
  bash();
  const flag = await script(sb, ["--permission-mode", "read-only", "--sandbox", "off"], [
    { kind: "set-permission-mode", id: "auto", mode: "auto" },
    { kind: "set-permission-mode", id: "ask", mode: "ask" },
    { kind: "set-permission-mode", id: "ro", mode: "read-only" },
    { kind: "prompt", id: "p", text: "run it" },
  ]);
  assert.equal(flag.code, 0, flag.stderr);
  assert.equal(flag.response("auto").error, "permission mode auto is wider than read-only, the mode this process was started with (--permission-mode)");
  assert.equal(flag.response("ask").error, "permission mode ask is wider than read-only, the mode this process was started with (--permission-mode)");
  assert.equal(flag.response("ro").ok, true);
  assert.equal(flag.lines.filter((l) => l.kind === "permission-request").length, 0);
  assert.deepEqual(flag.lines.filter((l) => l.kind === "tool-result").map((l) => [l.is_error, l.result]), [
    [true, "Not executed: the session is in read-only mode, so bash cannot run."],
  ]);

  const configured = makeSandbox(server.url, { permissionMode: "ask" });
  const config = await script(configured, ["--sandbox", "off"], [
    { kind: "set-permission-mode", id: "auto", mode: "auto" },
    { kind: "set-permission-mode", id: "edits", mode: "accept-edits" },
    { kind: "set-permission-mode", id: "ro", mode: "read-only" },
    { kind: "set-permission-mode", id: "ask", mode: "ask" },
  ]);
  assert.equal(config.code, 0, config.stderr);
  const file = join(configured.home, "config.json");
  assert.equal(config.response("auto").error, `permission mode auto is wider than ask, the mode this process was started with (permissionMode in ${file})`);
  assert.equal(config.response("edits").ok, false);
  assert.deepEqual([config.response("ro").ok, config.response("ask").ok], [true, true]);

  bash();
  const unset = await script(sb, ["--sandbox", "off"], [{ kind: "set-permission-mode", id: "auto", mode: "auto" }, { kind: "prompt", id: "p", text: "run it" }]);
  assert.equal(unset.response("auto").ok, true);
  assert.equal(unset.lines.filter((l) => l.kind === "permission-request").length, 0);
  assert.deepEqual(unset.lines.filter((l) => l.kind === "tool-result").map((l) => [l.is_error, l.result.trim()]), [[false, "ran"]]);
});

test("list-models marks the session's model: the start-up one, then the one set-model chose", async () => {
  const sb = makeSandbox(server.url);
  // --sandbox off here and below: no tool runs, and every turn with bash available warms the sandbox.
  const run = await runScript(sb.run, ["--model", "anthropic/claude-sonnet-5-5", "--sandbox", "off"], [
    { kind: "list-models", id: "before" },
    { kind: "set-model", id: "set", model: "anthropic/claude-haiku-5-5" },
    { kind: "list-models", id: "after" },
  ]);
  assert.equal(run.code, 0, run.stderr);
  const current = (id: string) => run.response(id).data.filter((m: { current: boolean }) => m.current).map((m: { model: string }) => m.model);
  assert.deepEqual(current("before"), ["anthropic/claude-sonnet-5-5"]);
  assert.deepEqual(current("after"), ["anthropic/claude-haiku-5-5"]);
});

test("a number id is echoed as the same number (also on a line that is not a valid command); the schema says string or number", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ text: "hi" });
  const run = await script(sb, ["--sandbox", "off"], [
    { kind: "list-sessions", id: 7 },
    { kind: "set-model", id: 8 },
    { kind: "list-models", id: "8" },
    { kind: "fly", id: 9.5 },
    { kind: "interrupt", id: -1 },
    { kind: "prompt", id: 0, text: "hello" },
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(answers(run).map(([id, command, ok]) => [id, typeof id, command, ok]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))), [
    [-1, "number", "interrupt", true],
    [0, "number", "prompt", true],
    [7, "number", "list-sessions", true],
    [8, "number", "invalid", false],
    ["8", "string", "list-models", true],
    [9.5, "number", "invalid", false],
  ]);
  // The schemas `keen protocol schema [--commands]` prints (stdio.test.ts and stdio-error-codes.test.ts run the command itself).
  const schema = commandJsonSchema() as { oneOf: { properties: { id: { anyOf: unknown }; kind: { const: string } } }[] };
  for (const option of schema.oneOf) assert.deepEqual(option.properties.id.anyOf, [{ type: "string" }, { type: "number" }], option.properties.kind.const);
  assert.match(JSON.stringify(protocolJsonSchema()), /"id":\{"anyOf":\[\{"type":"string"\},\{"type":"number"\}\]\}/);
});
