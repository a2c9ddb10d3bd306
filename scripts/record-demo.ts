// Regenerates app/cli/demo.cassette.jsonl, the cassette `keen run --replay demo`
// plays: Keen (bin/keen, so run `npm run build` first) is recorded against the
// mock LLM server in a fresh demo workspace, then the result is replayed once
// in another fresh workspace to check it. Run it again whenever Keen's requests
// change in what a replay matches on (the tool list above all):
//   npm run demo:record   (build, record, build again to ship it)
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDemoWorkspace, DEMO_PROMPT, demoCassettePath } from "../app/cli/demo.js";
import { parseLines, runKeen } from "../test/e2e/harness.js";
import { startMockLLMServer, type MockReplyStep } from "../test/fakes/mock-llm-server.js";

const MODEL = "anthropic/claude-sonnet-5-5";
// Pacing of a quick model: what `--replay-speed 1` (the default) shows.
const PACE: Partial<MockReplyStep> = { delayMs: 35 };

const STEPS: MockReplyStep[] = [
  {
    ...PACE,
    thinking: "The user says the test fails. I should read the code under test before guessing.",
    text: "Let me look at greet.js first.",
    toolCalls: [{ name: "read_file", input: { path: "greet.js" } }],
    usage: { input: 1890, output: 48 },
  },
  {
    ...PACE,
    thinking: 'test.js expects "Hello, Keen!", but greet() builds "Helo, " + name: the greeting is misspelled. A one-word edit fixes it.',
    text: "The greeting is misspelled (`Helo`). Fixing it.",
    toolCalls: [{ name: "edit_file", input: { path: "greet.js", old_string: '"Helo, "', new_string: '"Hello, "' } }],
    usage: { input: 1990, cacheRead: 1800, output: 71 },
  },
  {
    ...PACE,
    text: "Now the test:",
    toolCalls: [{ name: "bash", input: { command: "node test.js" } }],
    usage: { input: 2080, cacheRead: 1950, output: 30 },
  },
  {
    ...PACE,
    thinking: "The test prints ok, so the fix works. Summarise and note what was learned.",
    text: [
      'Fixed. `greet()` in `greet.js` returned `"Helo, " + name + "!"`; it now says `"Hello, "`, and `node test.js` prints `ok: greet works`.',
      "",
      "<keen_memory>",
      '- greet.js: typo "Helo" fixed to "Hello" in greet()',
      '- node test.js passes (prints "ok: greet works")',
      "</keen_memory>",
    ].join("\n"),
    usage: { input: 2150, cacheRead: 2040, output: 88 },
  },
];

const root = mkdtempSync(join(tmpdir(), "keen-record-demo-"));
const server = await startMockLLMServer();
try {
  const home = join(root, "keen-home");
  mkdirSync(home);
  const env = {
    KEEN_HOME: home, HOME: join(root, "home"), ANTHROPIC_API_KEY: "demo-recording-key", ANTHROPIC_BASE_URL: server.anthropicBaseURL,
    OPENAI_API_KEY: undefined, KEEN_RECORD: undefined, HTTPS_PROXY: undefined, HTTP_PROXY: undefined, https_proxy: undefined, http_proxy: undefined,
  };
  const cassette = join(root, "demo.cassette.jsonl");
  const workspace = createDemoWorkspace();
  server.enqueue(...STEPS);
  const recorded = await runKeen(
    ["run", "--record", cassette, "--model", MODEL, "--permission-mode", "auto", "--no-stdin", "--headless", DEMO_PROMPT],
    { cwd: workspace, env },
  );
  assert.equal(recorded.code, 0, `recording failed: ${recorded.stderr}`);
  assert.deepEqual(server.unexpected, []);
  assert.deepEqual(server.rejected, []);
  assert.equal(server.pending(), 0);
  // The recorded run really fixed the workspace.
  execFileSync(process.execPath, ["test.js"], { cwd: workspace });
  rmSync(workspace, { recursive: true, force: true });
  await server.close();

  // Replayed with the server gone, no key and a fresh workspace, it must succeed with the same tool calls.
  const again = createDemoWorkspace();
  const replayed = await runKeen(["run", "--replay", cassette, "--replay-speed", "0", "--permission-mode", "auto", "--headless"], {
    cwd: again, env: { ...env, ANTHROPIC_API_KEY: undefined },
  });
  rmSync(again, { recursive: true, force: true });
  assert.equal(replayed.code, 0, `replay failed: ${replayed.stderr}`);
  const errors = parseLines(replayed.stdout).filter((l) => l.kind === "tool-result" && l.is_error);
  assert.deepEqual(errors, [], "every tool call of the replay succeeds");
  copyFileSync(cassette, demoCassettePath());
  const size = readFileSync(cassette).length;
  process.stdout.write(`wrote ${demoCassettePath()} (${size} bytes, ${STEPS.length} requests); npm run build ships it\n`);
} finally {
  await server.close().catch(() => {});
  rmSync(root, { recursive: true, force: true });
}
