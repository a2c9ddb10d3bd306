import { test } from "node:test";
import assert from "node:assert/strict";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";

// What `keen run` prints for the providers and models of text turns, in this process
// (test/cli/in-process.ts). test/e2e/run-output.test.ts keeps the tool turns, the proxies and
// one spawned case of each format.

const server = useMockLLMServer();

function assertServerDone() {
  assert.deepEqual(server.unexpected, []);
  assert.deepEqual(server.rejected, []);
  assert.equal(server.pending(), 0);
}

const run = ["run", "--no-stdin", "--sandbox", "off"];

test("OpenAI thinking (<think> and reasoning_content) never reaches the visible text", async () => {
  const sb = makeInProcessSandbox(server);
  server.enqueue({ thinking: "hmm, secret plan", text: "Visible answer." });
  const env = { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.openaiBaseURL, ANTHROPIC_API_KEY: undefined };
  const r = await sb.keen([...run, "--model", "openai/gpt-4.1", "hi"], { env });
  assert.deepEqual({ code: r.code, stdout: r.stdout }, { code: 0, stdout: "Visible answer.\n" });
  server.enqueue({ thinking: "field thoughts", reasoningField: true, text: "Also visible." });
  const r2 = await sb.keen([...run, "--model", "openai/gpt-4.1", "hi"], { env });
  assert.deepEqual({ code: r2.code, stdout: r2.stdout }, { code: 0, stdout: "Also visible.\n" });
  assertServerDone();
});

test("model ids keep their slashes; the default model is the first provider with a key", async () => {
  const sb = makeInProcessSandbox(server);
  server.enqueue({ text: "a" }, { text: "b" });
  const withSlash = await sb.keen([...run, "--model", "openai/vendor/model-x", "hi"], {
    env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.openaiBaseURL },
  });
  assert.equal(withSlash.code, 0, withSlash.stderr);
  const byDefault = await sb.keen([...run, "hi"], { env: { OPENAI_API_KEY: "k" } });
  assert.equal(byDefault.code, 0, byDefault.stderr);
  assert.deepEqual(server.requests.map((q) => [q.vendor, q.body.model]), [
    ["openai", "vendor/model-x"],
    ["anthropic", "claude-sonnet-5-5"],
  ]);
  const models = (await sb.sessions()).map((s) => s.model).sort();
  assert.deepEqual(models, ["anthropic/claude-sonnet-5-5", "openai/vendor/model-x"]);
});

test("a local OpenAI-compatible server from config, and Ollama, need no key", async () => {
  const sb = makeInProcessSandbox(server, {
    providers: { local: { kind: "openai", baseURL: server.openaiBaseURL, keyOptional: true, defaultModel: "qwen" } },
  });
  const noKeys = { ANTHROPIC_API_KEY: undefined, OPENAI_API_KEY: undefined };
  server.enqueue({ text: "local" }, { text: "ollama" });
  const local = await sb.keen([...run, "--model", "local", "hi"], { env: noKeys });
  const ollama = await sb.keen([...run, "--model", "ollama/qwen3:8b", "hi"], { env: { ...noKeys, OLLAMA_BASE_URL: server.openaiBaseURL } });
  assert.deepEqual([local.code, local.stdout, ollama.code, ollama.stdout], [0, "local\n", 0, "ollama\n"], local.stderr + ollama.stderr);
  assert.deepEqual(server.requests.map((q) => [q.vendor, q.body.model]), [["openai", "qwen"], ["openai", "qwen3:8b"]]);
  assertServerDone();
});

test("cost_usd follows a price set in config, and is absent for a model with no known price", async () => {
  const price = { input: 10, output: 100 };
  const sb = makeInProcessSandbox(server, { providers: { anthropic: { models: { "claude-sonnet-5-5": { price }, "my-model": {} } } } });
  server.enqueue({ text: "a", usage: { input: 1000, output: 10 } }, { text: "b", usage: { input: 1000, output: 10 } });
  assert.equal((await sb.runJson(["hi"])).cost_usd, (1000 * 10 + 10 * 100) / 1e6);
  const unknown = await sb.runJson(["--model", "anthropic/my-model", "hi"]);
  assert.equal("cost_usd" in unknown, false);
});
