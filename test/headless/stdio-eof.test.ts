import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { CommandSchema, type Command } from "../../protocol/commands.js";
import { ErrorCodeSchema, RESPONSE_DATA } from "../../protocol/responses.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "../cli/in-process.js";
import { kindSequence } from "../e2e/protocol-check.js";
import { stdioInProcess, type InProcessRun } from "./stdio-in-process.js";

/*
 * docs/PROTOCOL.md: every command read before EOF is answered before keen
 * stdio ends. Each kind is written as the very last line before EOF, one run
 * per case, through keen stdio's own function in this process (a spawn per
 * case cost ~12 s of CPU); test/e2e/stdio-contract.test.ts checks the real
 * process does the same for the kinds whose answer waits on work (a turn, a
 * compaction, a shell command, shutdown).
 */
const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();
const KINDS = CommandSchema.options.map((o) => o.shape.kind.value);

test("every command kind, followed at once by EOF, is answered before keen stdio ends (a prompt with its whole turn)", async () => {
  // The sandbox plays no role in what is answered: off, so no sandbox starts in this process.
  const sb = makeInProcessSandbox(server);
  const stdio = (flags: { session?: string; permissionMode?: string }, commands: Record<string, unknown>[]) =>
    stdioInProcess({ model: MODEL, sandbox: "off", ...flags }, sb.env, sb.workspace, commands);
  // A stored session whose one turn wrote a.txt: something to undo, rewind, fork and compact.
  server.enqueue({ toolCalls: [{ id: "w", name: "write_file", input: { path: "a.txt", content: "new\n" } }] }, { text: "Wrote a.txt." });
  const first = await stdio({ permissionMode: "auto" }, [{ kind: "prompt", id: "p", text: "write a.txt" }]);
  assert.equal(first.code, 0);
  const session = first.response("p").data.session_id as string;
  // One entry per kind (the type makes a new kind without an entry a compile error).
  const last: Record<Command["kind"], { flags?: { session: string }; command: Command; mock?: Parameters<typeof server.enqueue>; check(r: Record<string, any>, run: InProcessRun): void }[]> = {
    prompt: [{
      command: { kind: "prompt", id: "p", text: "hi" }, mock: [{ text: "Hello there." }],
      check: (r, run) => {
        assert.deepEqual([r.ok, r.data.status], [true, "success"]);
        assert.deepEqual(kindSequence(run.lines), ["session-start", "text", "text-delta", "content-end", "text", "result", "response"]);
        assert.equal(run.lines.find((l) => l.kind === "result")!.text, "Hello there.");
      },
    }],
    interrupt: [{ command: { kind: "interrupt", id: "i" }, check: (r) => assert.deepEqual([r.ok, r.data], [true, { interrupted: false }]) }],
    "permission-response": [{
      command: { kind: "permission-response", id: "pr", request_id: "nope", decision: "allow-once" },
      check: (r) => assert.deepEqual([r.ok, typeof r.error], [false, "string"]),
    }],
    "set-model": [{ command: { kind: "set-model", id: "m", model: "anthropic/claude-haiku-5-5" }, check: (r) => assert.deepEqual([r.ok, r.data], [true, { model: "anthropic/claude-haiku-5-5" }]) }],
    "set-permission-mode": [{ command: { kind: "set-permission-mode", id: "pm", mode: "read-only" }, check: (r) => assert.deepEqual([r.ok, r.data], [true, { mode: "read-only" }]) }],
    "new-session": [{ command: { kind: "new-session", id: "n" }, check: (r) => assert.deepEqual([r.ok, typeof r.data.session_id, r.data.cwd], [true, "string", sb.workspace]) }],
    "resume-session": [
      { command: { kind: "resume-session", id: "r", session }, check: (r) => assert.deepEqual([r.ok, r.data.session_id, r.data.title], [true, session, "write a.txt"]) },
      { command: { kind: "resume-session", id: "r", session: "zzzz" }, check: (r) => assert.deepEqual([r.ok, r.error, r.error_code], [false, "no session matches 'zzzz'", "unknown_session"]) },
      {
        command: { kind: "resume-session", id: "r", session: session.slice(0, 20), replay: true },
        check: (r, run) => {
          assert.equal(r.ok, true);
          assert.deepEqual(run.lines.filter((l) => l.replay && l.kind === "text").map((l) => l.content), ["write a.txt", "Wrote a.txt."]);
        },
      },
    ],
    "list-sessions": [{ command: { kind: "list-sessions", id: "ls" }, check: (r) => assert.deepEqual([r.ok, r.data.some((s: { id: string }) => s.id === session)], [true, true]) }],
    "list-models": [{
      command: { kind: "list-models", id: "lm" },
      check: (r) => assert.deepEqual([r.ok, r.data.filter((m: { current: boolean }) => m.current).map((m: { model: string }) => m.model)], [true, [MODEL]]),
    }],
    "list-files": [{ command: { kind: "list-files", id: "lf", query: "a." }, check: (r) => assert.deepEqual([r.ok, r.data], [true, { paths: ["a.txt"], truncated: false }]) }],
    "list-commands": [{ command: { kind: "list-commands", id: "lc" }, check: (r) => assert.deepEqual([r.ok, r.data], [true, []]) }],
    "list-skills": [{ command: { kind: "list-skills", id: "ls" }, check: (r) => assert.deepEqual([r.ok, r.data], [true, { skills: [], skipped: [] }]) }],
    shutdown: [{ command: { kind: "shutdown", id: "s" }, check: (r) => assert.equal(r.ok, true) }],
    undo: [{
      flags: { session }, command: { kind: "undo", id: "u" },
      check: (r) => assert.deepEqual([r.ok, r.data], [true, { files: [{ path: join(sb.workspace, "a.txt"), action: "remove" }], restored: false, to: 1 }]),
    }],
    shell: [
      {
        flags: { session }, command: { kind: "shell", id: "s", command: "echo from-the-user; exit 3" },
        check: (r, run) => {
          assert.deepEqual([r.ok, r.data.session_id, r.data.exit_code, r.data.is_error], [true, session, 3, true]);
          const done = run.lines.find((l) => l.kind === "shell")!;
          assert.match(done.output, /from-the-user/);
          assert.deepEqual([done.command, done.exit_code, done.role], ["echo from-the-user; exit 3", 3, "user"]);
          assert.equal(run.lines.find((l) => l.kind === "shell-start")!.shell_id, done.shell_id);
        },
      },
      { command: { kind: "shell", id: "s", command: "  " }, check: (r) => assert.deepEqual([r.ok, r.error_code], [false, "empty_prompt"]) },
    ],
    compact: [{
      flags: { session }, command: { kind: "compact", id: "c" }, mock: [{ text: "SUMMARY of the session" }],
      check: (r) => assert.deepEqual([r.ok, r.data.session_id, typeof r.data.tokens_after], [true, session, "number"]),
    }],
    "list-checkpoints": [{
      flags: { session }, command: { kind: "list-checkpoints", id: "lc" },
      check: (r) => {
        assert.equal(r.ok, true, r.error);
        assert.deepEqual(r.data.checkpoints.map((c: any) => [c.index, c.text, c.files]), [[1, "write a.txt", [join(sb.workspace, "a.txt")]]]);
      },
    }],
    "fork-session": [{
      command: { kind: "fork-session", id: "f", session, at: 1 },
      check: (r) => assert.deepEqual([r.ok, r.data.parent, r.data.at, r.data.text, r.data.session_id !== session], [true, session, 1, "write a.txt", true]),
    }],
    // A job that never started (a real kill round trip is in test/e2e/jobs.test.ts: a job spawns a process).
    "kill-job": [{ command: { kind: "kill-job", id: "k", job_id: "job-1" }, check: (r) => assert.deepEqual([r.ok, r.error_code], [false, "unknown_job"]) }],
    rewind: [
      { flags: { session }, command: { kind: "rewind", id: "rw", to: 2 }, check: (r) => assert.deepEqual([r.ok, r.error_code], [false, "unknown_checkpoint"]) },
      {
        flags: { session }, command: { kind: "rewind", id: "rw", to: 1 },
        check: (r) => assert.deepEqual([r.ok, r.data], [true, { session_id: session, to: 1, text: "write a.txt", files: [] }]),
      },
    ],
  };
  assert.deepEqual(Object.keys(last).sort(), [...KINDS].sort(), "every command kind is tried");
  for (const cases of Object.values(last)) {
    for (const { flags = {}, command, mock, check } of cases) {
      if (mock) server.enqueue(...mock);
      const run = await stdio(flags, [command]);
      assert.equal(run.code, 0, command.kind);
      const response = run.response(command.id!);
      check(response, run);
      // The typed answer (protocol/responses.ts) is what the process writes: `data` of an ok one, the code of a refusal.
      if (response.ok) RESPONSE_DATA[command.kind].parse(response.data);
      else assert.ok(ErrorCodeSchema.safeParse(response.error_code).success, `${command.kind}: error_code ${response.error_code}`);
      assert.equal(run.lines.at(-1)!.kind, "response", `${command.kind}: the response is the last line`);
    }
  }
  assert.equal(server.pending(), 0);
});
