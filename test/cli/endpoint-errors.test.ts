import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";

// A base URL that is not an http(s) URL, from a variable or from the config: a usage error decided
// inside Keen, so the cases run through main() in this process (a Keen start each cost ~0.4 s of CPU).
// test/e2e/endpoints.test.ts keeps one spawned case of each (the real process's exit code and streams).

const server = useMockLLMServer();

test("a base URL variable that is not an http(s) URL is a usage error naming it: exit 2, nothing on stdout, no request, no session", async () => {
  const sb = makeInProcessSandbox(server);
  for (const [variable, value, args] of [
    ["ANTHROPIC_BASE_URL", "htp//127.0.0.1:8080", []],
    ["ANTHROPIC_BASE_URL", "localhost:8080", []],
    ["ANTHROPIC_BASE_URL", "ftp://127.0.0.1/", []],
    ["OPENAI_BASE_URL", "http//127.0.0.1:8080/v1", ["--model", "openai/gpt-4.1"]],
    ["OLLAMA_BASE_URL", "127.0.0.1:11434", ["--model", "ollama/qwen3:8b"]],
  ] as const) {
    const r = await sb.keen(["run", "--headless", "--no-stdin", ...args, "hi"], { env: { [variable]: value, OPENAI_API_KEY: "test-key" } });
    assert.equal(r.code, 2, `${variable}=${value}: ${r.stderr}`);
    assert.equal(r.stdout, "");
    assert.equal(r.stderr, `keen: ${variable} is not an http(s) URL: ${JSON.stringify(value)} (expected e.g. http://127.0.0.1:8080${variable === "ANTHROPIC_BASE_URL" ? "" : "/v1"})\n`);
  }
  assert.deepEqual(await sb.sessions(), []);
  assert.equal(server.requests.length, 0);
});

test("a config base URL that is not an http(s) URL names the file and the key: exit 2, no session", async () => {
  const sb = makeInProcessSandbox(server, { providers: { local: { kind: "openai", baseURL: "localhost:8080", defaultModel: "m", keyOptional: true } } });
  const r = await sb.keen(["run", "--no-stdin", "--model", "local/m", "hi"]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr, `keen: ${join(sb.home, "config.json")}: providers.local.baseURL: not an http(s) URL\n`);
  assert.deepEqual(await sb.sessions(), []);
  assert.equal(server.requests.length, 0);
});
