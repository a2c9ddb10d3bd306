import { test } from "node:test";
import assert from "node:assert/strict";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox } from "./harness.js";
import { runScript } from "./stdio-client.js";

/*
 * The user's own command (`shell`, the TUI's `!command`): it runs without a
 * permission prompt, its output streams as events, and the next prompt — and
 * only that one — brings command and output to the model; stored, so a
 * resumed session still has them in its history.
 */
const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();

const userTexts = (body: any): string[] =>
  body.messages.filter((m: any) => m.role === "user").map((m: any) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));

test("shell: runs unasked in the workspace, streams its output, and the next prompt carries it to the model, also after resume", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ text: "You listed one file." });
  const first = await runScript(sb.run, ["--model", MODEL, "--permission-mode", "ask"], [
    // Progress still pending when a command ends is dropped (the shell event is the record): the sleep lets the throttled update go out.
    { kind: "shell", id: "s", command: "printf 'x\\n' > seen.txt; ls; echo marker-$((40+2)); sleep 1" },
    { kind: "prompt", id: "p", text: "what did I just see?" },
  ]);
  assert.equal(first.code, 0, first.stderr);
  const shell = first.response("s");
  assert.deepEqual([shell.ok, shell.data.exit_code, shell.data.is_error], [true, 0, false]);
  assert.ok(!first.lines.some((l) => l.kind === "permission-request"), "the user's own command is not asked about");
  const done = first.lines.find((l) => l.kind === "shell")!;
  assert.match(done.output, /seen\.txt/);
  assert.match(done.output, /marker-42/);
  assert.ok(first.lines.some((l) => l.kind === "shell-update" && /marker-42/.test(l.tail)), "the output streamed");
  assert.equal(first.response("p").ok, true);
  const shown = first.lines.filter((l) => l.kind === "text" && l.role === "user").map((l) => l.content);
  assert.deepEqual(shown, ["what did I just see?"], "the prompt is shown as typed: the context goes to the model only");
  const [request] = server.requests;
  const last = userTexts(request!.body).at(-1)!;
  assert.match(last, /user_shell_command/);
  assert.match(last, /marker-42/);
  assert.match(last, /what did I just see\?/);

  // Resumed in another process: the command is in the history, not repeated with the new prompt.
  server.enqueue({ text: "Still one file." });
  const second = await runScript(sb.run, ["--model", MODEL, "--session", shell.data.session_id], [{ kind: "prompt", id: "q", text: "and now?" }]);
  assert.equal(second.code, 0, second.stderr);
  const texts = userTexts(server.requests[1]!.body);
  assert.equal(texts.length, 2);
  assert.match(texts[0]!, /marker-42/);
  assert.doesNotMatch(texts[1]!, /user_shell_command/);
});
