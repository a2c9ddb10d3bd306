import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type MockReplyStep } from "../fakes/mock-llm-server.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";

const server = useMockLLMServer();

type Sandbox = ReturnType<typeof makeSandbox>;

/** Runs one turn whose first step makes `calls`, then answers "done"; returns the tool results in order. */
async function toolResults(sb: Sandbox, calls: NonNullable<MockReplyStep["toolCalls"]>, env: Record<string, string> = {}) {
  server.enqueue({ toolCalls: calls }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"], { env });
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  assert.deepEqual([lines.at(-1)!.kind, lines.at(-1)!.status], ["result", "success"], "the run goes on after refusals");
  assert.deepEqual(server.unexpected, []);
  assert.deepEqual(server.rejected, []);
  // What the model received is what the stream showed.
  const sent = server.requests[1]!.body.messages.at(-1).content.filter((b: { type: string }) => b.type === "tool_result");
  const results = lines.filter((l) => l.kind === "tool-result");
  assert.deepEqual(
    sent.map((b: any) => [b.tool_use_id, b.is_error ?? false, typeof b.content === "string" ? b.content : b.content.map((c: any) => c.text).join("")]),
    results.map((l) => [l.tool_call_id, l.is_error, l.result]),
  );
  return results.map((l) => ({ tool: l.tool_name, is_error: l.is_error, result: l.result }));
}

const refusedSecret = (path: string, kind: string) =>
  `Refused: ${path} is ${kind}, which may hold secrets; Keen's file tools never read or write secrets.`;

test("the guard refuses secrets for reading, whatever the path says; the run goes on", async () => {
  const sb = makeSandbox(server.url);
  const home = sb.env.HOME!;
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".ssh", "id_rsa"), "PRIVATE KEY MATERIAL");
  writeFileSync(join(sb.workspace, ".env"), "API_TOKEN=super-secret");
  writeFileSync(join(sb.workspace, ".env.example"), "API_TOKEN=");
  mkdirSync(join(sb.workspace, "sub"));
  symlinkSync(join(home, ".ssh", "id_rsa"), join(sb.workspace, "innocent.txt"));

  const results = await toolResults(sb, [
    { name: "read_file", input: { path: ".env" } },
    { name: "read_file", input: { path: "sub/../.env" } },
    { name: "read_file", input: { path: join(home, ".ssh", "id_rsa") } },
    { name: "read_file", input: { path: "innocent.txt" } },
    { name: "read_file", input: { path: "~/.ssh/id_rsa" } },
    { name: "read_file", input: { path: ".env.example" } },
  ]);
  const envFile = "an environment file (.env.example, .env.sample, .env.template and .env.dist are allowed)";
  assert.deepEqual(results.slice(0, 2), [
    { tool: "read_file", is_error: true, result: refusedSecret(join(sb.workspace, ".env"), envFile) },
    { tool: "read_file", is_error: true, result: refusedSecret(join(sb.workspace, ".env"), envFile) },
  ]);
  for (const r of results.slice(2, 5)) {
    assert.equal(r.is_error, true);
    assert.match(r.result, /^Refused: .*\.ssh\/id_rsa/);
  }
  assert.ok(results[4]!.result.startsWith(`Refused: ${join(home, ".ssh", "id_rsa")} `), results[4]!.result);
  assert.equal(results[5]!.is_error, false);
  assert.match(results[5]!.result, /API_TOKEN=/);
  assert.doesNotMatch(JSON.stringify(server.requests), /super-secret|PRIVATE KEY MATERIAL/);
});

test("writes outside the workspace are refused, by absolute path, by .. and through a symlink", async () => {
  const sb = makeSandbox(server.url);
  const outside = join(sb.root, "outside");
  mkdirSync(outside);
  symlinkSync(outside, join(sb.workspace, "door"));
  const results = await toolResults(sb, [
    { name: "write_file", input: { path: join(outside, "a.txt"), content: "x" } },
    { name: "write_file", input: { path: "../outside/b.txt", content: "x" } },
    { name: "write_file", input: { path: "door/c.txt", content: "x" } },
    { name: "write_file", input: { path: "inside.txt", content: "fine\n" } },
  ]);
  const refusal = (file: string) => `Refused: writing outside the workspace (${sb.workspace}) is not allowed: ${join(outside, file)}`;
  assert.deepEqual(results.slice(0, 2), [
    { tool: "write_file", is_error: true, result: refusal("a.txt") },
    { tool: "write_file", is_error: true, result: refusal("b.txt") },
  ]);
  assert.equal(results[2]!.is_error, true);
  assert.match(results[2]!.result, /^Refused: writing outside the workspace/);
  assert.equal(results[3]!.is_error, false);
  for (const file of ["a.txt", "b.txt", "c.txt"]) assert.equal(existsSync(join(outside, file)), false, file);
  assert.equal(readFileSync(join(sb.workspace, "inside.txt"), "utf8"), "fine\n");
});

test("gitignored files are left out of list, glob and grep", async () => {
  const sb = makeSandbox(server.url);
  execFileSync("git", ["init", "-q"], { cwd: sb.workspace });
  writeFileSync(join(sb.workspace, ".gitignore"), "ignored.txt\nbuild/\n");
  writeFileSync(join(sb.workspace, "kept.txt"), "needle here\n");
  writeFileSync(join(sb.workspace, "ignored.txt"), "needle hidden\n");
  mkdirSync(join(sb.workspace, "build"));
  writeFileSync(join(sb.workspace, "build", "out.txt"), "needle built\n");
  const results = await toolResults(sb, [
    { name: "list", input: {} },
    { name: "glob", input: { pattern: "**/*.txt" } },
    { name: "grep", input: { pattern: "needle" } },
  ]);
  for (const r of results) {
    assert.equal(r.is_error, false, r.result);
    assert.match(r.result, /kept\.txt/);
    assert.doesNotMatch(r.result, /ignored\.txt|build/);
  }
});

test("bash runs without provider keys or other secrets in its environment", async () => {
  const sb = makeSandbox(server.url);
  const [env] = await toolResults(sb, [{ name: "bash", input: { command: "env" } }], {
    OPENAI_API_KEY: "sk-openai-secret", GITHUB_TOKEN: "ghp-secret", KEEN_VISIBLE: "yes",
  });
  assert.equal(env!.is_error, false);
  const names = env!.result.split("\n").map((line: string) => line.split("=")[0]);
  for (const hidden of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN"]) assert.ok(!names.includes(hidden), hidden);
  assert.doesNotMatch(env!.result, /test-key|sk-openai-secret|ghp-secret/);
  assert.ok(env!.result.includes("KEEN_VISIBLE=yes\n"));
  assert.ok(env!.result.includes(`PWD=${sb.workspace}\n`));
});

test("a tool the run does not offer, an unknown tool and unparsable input become error results, and nothing runs", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue(
    {
      toolCalls: [
        { name: "bash", input: { command: "touch ran.txt" } },
        { name: "teleport", input: {} },
        { name: "write_file", rawArguments: '{"path": "x.txt", "content' },
      ],
    },
    { text: "done" },
  );
  const r = await sb.run(["run", "--headless", "--no-stdin", "--disallowed-tools", "bash", "go"]);
  assert.equal(r.code, 0, r.stderr);
  const results = parseLines(r.stdout).filter((l) => l.kind === "tool-result");
  assert.deepEqual(results.map((l) => [l.tool_name, l.is_error]), [["bash", true], ["teleport", true], ["write_file", true]]);
  assert.equal(existsSync(join(sb.workspace, "ran.txt")), false);
  assert.equal(existsSync(join(sb.workspace, "x.txt")), false);
  assert.deepEqual([server.unexpected, server.rejected, server.pending()], [[], [], 0]);
});
