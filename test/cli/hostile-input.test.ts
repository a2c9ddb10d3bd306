import { test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../storage/level-store.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { checkDeepInputRefused, deepInput } from "./hostile-input-checks.js";
import { makeInProcessSandbox } from "./in-process.js";

// Issue 10, item 5, in this process (test/cli/in-process.ts): the OpenAI side of a tool input
// nested 100,000 deep. test/e2e/run-hostile-input.test.ts spawns the Anthropic side through the
// bundle. The call is refused before it runs, so no tool runs and the sandbox plays no role (off).

const server = useMockLLMServer();

const DEPTH = 100_000;
const run = ["run", "--no-stdin", "--sandbox", "off", "--model", "openai/gpt-4.1"];
const env = () => ({ env: { OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: server.openaiBaseURL } });

test(`a tool input nested ${DEPTH} deep (openai): a clear tool error, no crash, the session stored and resumable`, async () => {
  const sb = makeInProcessSandbox(server);
  server.enqueue({ toolCalls: [{ name: "grep", rawArguments: deepInput(DEPTH) }], chunkSize: 50_000 }, { text: "noted" });
  const r = await sb.keen([...run, "--headless", "search"], env());
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  const session = checkDeepInputRefused(r.stdout, server.requests);
  const events = await openStore(sb.home).load(session);
  assert.deepEqual(events.filter((e: any) => e.kind === "tool-result").map((e: any) => e.is_error), [true]);
  server.enqueue({ text: "again" });
  const again = await sb.keen([...run, "--session", session, "more"], env());
  assert.deepEqual([again.code, again.stdout], [0, "again\n"], again.stderr);
});
