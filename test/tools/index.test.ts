import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { createRedactor } from "../../app/permissions/redact.js";
import { BASH_OUTPUT_CAP } from "../../app/tools/bash.js";
import { createTools, isSecretEnvName, toolEnv, withRedaction } from "../../app/tools/index.js";
import { callView } from "../../app/tools/tool.js";
import { call, tempWorkspace } from "./helpers.js";

test("createTools: the built-in tools in order, each with a JSON Schema object and a description", () => {
  const tools = createTools(tempWorkspace().ctx());
  assert.deepEqual(tools.map((t) => t.definition.name), ["bash", "read_file", "write_file", "edit_file", "grep", "glob", "list", "todo_write", "skill", "task", "web_fetch"]);
  for (const { definition } of tools) {
    assert.equal(definition.inputSchema.type, "object", definition.name);
    assert.equal("$schema" in definition.inputSchema, false, definition.name);
    assert.ok(definition.description.length > 50, definition.name);
  }
  const bash = tools[0]!.definition.inputSchema as { required: string[]; properties: Record<string, unknown> };
  assert.deepEqual(bash.required, ["command"]);
  assert.deepEqual(Object.keys(bash.properties), ["command", "timeout_ms", "background"]);
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

test("the scrub also drops glued and short secret names, and still keeps look-alikes", () => {
  for (const name of ["PGPASSWORD", "GH_PAT", "GITLAB_PAT", "DBPASSWORD", "MYSECRET", "GITLABTOKEN", "SMTP_PASS", "GPG_PASSPHRASE", "CI_JOB_TOKEN", "VAULT_SECRETS", "npm_config__authToken"]) {
    assert.equal(isSecretEnvName(name), true, name);
  }
  for (const name of ["TOKENIZERS_PARALLELISM", "KEYTIMEOUT", "SSH_AUTH_SOCK", "MAX_TOKENS", "PATH", "PWD", "OLDPWD", "GIT_ASKPASS", "KEYMAP", "SECRETARY", "BYPASS_CACHE"]) {
    assert.equal(isSecretEnvName(name), false, name);
  }
});

test("with a redactor, no known secret leaves a tool: content, details, progress output, exceptions", async () => {
  const key = "sk-test-secret-0123456789";
  const t = tempWorkspace();
  t.write({ "notes.txt": `the key is ${key}\n` });
  const redactor = createRedactor([key]);
  const tools = createTools({ ...t.ctx(), redactor });
  const byName = (name: string) => tools.find((tool) => tool.definition.name === name)!;
  const read = await byName("read_file").run({ path: "notes.txt" }, call());
  assert.match(read.content, /the key is \[redacted\]/);
  assert.doesNotMatch(read.content, /sk-test-secret/);
  // Printed in two pieces with a pause between: the progress chunks split the key.
  const chunks: string[] = [];
  const command = "cut -c12- notes.txt | head -c 10; sleep 0.1; cut -c22- notes.txt";
  const bash = await byName("bash").run({ command }, call({ onOutput: (c) => chunks.push(c) }));
  assert.equal(bash.content, "[redacted]\n");
  assert.equal(chunks.join(""), "[redacted]\n");
  const throwing = withRedaction({
    definition: { name: "boom", description: "", inputSchema: {} },
    run: async () => {
      throw new Error(`request failed with header x-api-key: ${key}`);
    },
  }, redactor);
  await assert.rejects(throwing.run({}, call()), { message: "request failed with header x-api-key: [redacted]" });
});

test("bash: a cut through a secret never leaves part of it, wherever the padding puts the cut", async () => {
  const key = "sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const t = tempWorkspace();
  t.write({ "key.txt": key });
  const bash = createTools({ ...t.ctx(), redactor: createRedactor([key]) })[0]!;
  const half = BASH_OUTPUT_CAP / 2;
  for (const shift of [1, 7, 20, key.length - 1]) {
    // The head keeps `half` characters: pad so that the cut falls `shift` characters into the key.
    const head = await bash.run({ command: `head -c ${half - shift} /dev/zero | tr '\\0' a; cat key.txt; head -c ${3 * half} /dev/zero | tr '\\0' b` }, call());
    // The tail keeps the last `half` characters: put the key so that only its last `shift` characters are inside.
    const tail = await bash.run({ command: `head -c ${3 * half} /dev/zero | tr '\\0' a; cat key.txt; head -c ${half - shift} /dev/zero | tr '\\0' b` }, call());
    for (const r of [head, tail]) {
      const parts = [key.slice(0, shift), key.slice(-shift), key.slice(0, 8), key.slice(-8)].filter((p) => p.length >= 8 || p === key.slice(0, shift) && shift >= 8);
      for (const part of parts) assert.ok(!r.content.includes(part), `shift ${shift}: "${part}" leaked`);
      assert.ok(!/ABCDEFGH|STUVWXYZ|sk-ant-a/.test(r.content), `shift ${shift}`);
    }
  }
});

test("every built-in tool declares its kind and describes a call: a title and absolute locations", () => {
  const t = tempWorkspace();
  const ctx = t.ctx();
  const tools = new Map(createTools(ctx).map((tool) => [tool.definition.name, tool]));
  assert.deepEqual([...tools].map(([name, tool]) => [name, tool.kind]), [
    ["bash", "exec"], ["read_file", "read"], ["write_file", "edit"], ["edit_file", "edit"], ["grep", "search"], ["glob", "search"], ["list", "read"], ["todo_write", "other"], ["skill", "read"], ["task", "other"], ["web_fetch", "network"],
  ]);
  const view = (name: string, input: unknown) => callView(tools.get(name)!, input);
  assert.deepEqual(view("read_file", { path: "src/a.ts", offset: 10 }), {
    tool_kind: "read", mutates: false, title: "Read src/a.ts from line 10", locations: [{ path: join(ctx.cwd, "src/a.ts"), line: 10 }],
  });
  assert.equal(view("read_file", { path: "src/a.ts", offset: 10, limit: 20 }).title, "Read src/a.ts:10-29");
  assert.equal(view("read_file", { path: "src/a.ts", limit: 5 }).title, "Read src/a.ts:1-5");
  assert.equal(view("read_file", { path: "src/a.ts" }).title, "Read src/a.ts");
  assert.deepEqual(view("edit_file", { path: "/abs/b.ts" }), { tool_kind: "edit", mutates: true, title: "Edit /abs/b.ts", locations: [{ path: "/abs/b.ts" }] });
  assert.deepEqual(view("bash", { command: "npm test" }), { tool_kind: "exec", mutates: true, title: "npm test", locations: [] });
  assert.deepEqual(view("web_fetch", { url: "https://example.com/a" }), { tool_kind: "network", mutates: false, title: "Fetch https://example.com/a", locations: [] });
  assert.equal(view("grep", { pattern: "TODO", path: "src" }).title, "Search for TODO in src");
  assert.deepEqual(view("skill", { name: "pdf" }), { tool_kind: "read", mutates: false, title: "Load skill pdf", locations: [] });
  // Bad input still gives a view.
  assert.deepEqual(view("write_file", "not an object"), { tool_kind: "edit", mutates: true, title: "Write a file", locations: [] });
});
