import assert from "node:assert/strict";
import { test } from "node:test";
import { createTools, isSecretEnvName, toolEnv } from "../../app/tools/index.js";
import { call, tempWorkspace } from "./helpers.js";

test("createTools: the seven tools in order, each with a JSON Schema object and a description", () => {
  const tools = createTools(tempWorkspace().ctx());
  assert.deepEqual(tools.map((t) => t.definition.name), ["bash", "read_file", "write_file", "edit_file", "grep", "glob", "list"]);
  for (const { definition } of tools) {
    assert.equal(definition.inputSchema.type, "object", definition.name);
    assert.equal("$schema" in definition.inputSchema, false, definition.name);
    assert.ok(definition.description.length > 50, definition.name);
  }
  const bash = tools[0]!.definition.inputSchema as { required: string[]; properties: Record<string, unknown> };
  assert.deepEqual(bash.required, ["command"]);
  assert.deepEqual(Object.keys(bash.properties), ["command", "timeout_ms"]);
});

test("every tool answers junk input with an error result", async () => {
  for (const tool of createTools(tempWorkspace().ctx())) {
    const r = await tool.run("not an object", call());
    assert.equal(r.is_error, true);
    assert.match(r.content, new RegExp(`^Invalid input for ${tool.definition.name}:`));
  }
});

test("toolEnv strips provider keys and other secrets, keeps the rest", () => {
  const env = toolEnv({
    PATH: "/bin", HOME: "/h", ANTHROPIC_API_KEY: "a", OPENAI_API_KEY: "o", GEMINI_API_KEY: "g", OPENAI_APIKEY: "x",
    KEEN_API_KEY: "k", KEEN_TOKEN: "t", KEEN_MODEL: "m", GITHUB_TOKEN: "gh", AWS_SECRET_ACCESS_KEY: "s",
    DB_PASSWORD: "p", npm_config__authToken: "n", ANTHROPIC_AUTH_TOKEN: "t2", ANTHROPIC_BASE_URL: "http://x",
    SSH_AUTH_SOCK: "/s", TOKENIZERS_PARALLELISM: "false", KEYTIMEOUT: "1",
  });
  assert.deepEqual(Object.keys(env).sort(), ["ANTHROPIC_BASE_URL", "HOME", "KEEN_MODEL", "KEYTIMEOUT", "PATH", "SSH_AUTH_SOCK", "TOKENIZERS_PARALLELISM"]);
  assert.equal(isSecretEnvName("my_service_api_key"), true);
});
