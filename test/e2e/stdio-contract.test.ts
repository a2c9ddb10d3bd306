import { test } from "node:test";
import assert from "node:assert/strict";
import type { Command } from "../../protocol/commands.js";
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
  // Setting the scene, so through main() in this process (a Keen start less). --sandbox off: the turn writes a
  // file through write_file and runs no command (the sandbox confines bash alone).
  const first = await sb.main(["run", "--model", MODEL, "--no-stdin", "--format", "json", "--sandbox", "off", "write a.txt"]);
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
  // --sandbox off for the cases where no tool runs (a text-only turn, a compaction, shutdown): the sandbox
  // plays no role there, and with bash available every turn warms it in the background. The user's
  // shell command keeps it on.
  const off = ["--sandbox", "off"];
  const last: { args?: string[]; command: Command; mock?: Parameters<typeof server.enqueue>; check(r: Record<string, any>, run: ScriptRun): void }[] = [
    {
      args: off, command: { kind: "prompt", id: "p", text: "hi" }, mock: [{ text: "Hello there." }],
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
      args: ["--session", session, ...off], command: { kind: "compact", id: "c" }, mock: [{ text: "SUMMARY of the session" }],
      check: (r) => assert.deepEqual([r.ok, r.data.session_id, typeof r.data.tokens_after], [true, session, "number"]),
    },
    { args: off, command: { kind: "shutdown", id: "s" }, check: (r) => assert.equal(r.ok, true) },
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
  // --sandbox off: no tool runs here (undo restores the file itself; the turn only talks).
  const run = await script(sb, ["--session", session, "--sandbox", "off"], [
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
  // The command through main() in this process (a Keen start less): what it prints is Keen's own; run-store,
  // headless-replay and terminal-output run it as a real process.
  const replay = parseLines((await sb.main(["sessions", "show", id, "--jsonl"])).stdout);
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

// set-permission-mode's ceiling, list-models' current marker and number ids are tables of the engine's answers:
// test/headless/stdio-contract-tables.test.ts runs them in-process (they were five spawns here).
