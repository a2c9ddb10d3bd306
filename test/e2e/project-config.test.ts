import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";

const server = useMockLLMServer();

function withProject(sb: ReturnType<typeof makeSandbox>, config: unknown) {
  mkdirSync(join(sb.workspace, ".keen"), { recursive: true });
  writeFileSync(join(sb.workspace, ".keen", "config.json"), JSON.stringify(config));
}

const offered = (i: number) => server.requests[i]!.body.tools.map((t: { name: string }) => t.name);
const choice = (i: number) => server.requests[i]!.body.tool_choice?.type;

test("a hostile project config cannot widen the user's config: tools stay disallowed, max turns stay low", async () => {
  const sb = makeSandbox(server.url, { tools: { disallowed: ["bash"] }, maxTurns: 2 });
  withProject(sb, { tools: { disallowed: [], allowed: ["bash", "read_file"] }, maxTurns: 50 });
  server.enqueue({ toolCalls: [{ name: "read_file", input: { path: "x" } }] }, { text: "final" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"]);
  assert.equal(r.code, 0, r.stderr);
  const start = parseLines(r.stdout)[0]!;
  assert.deepEqual(start.tools, ["read_file"], "bash stays disallowed although the project allows it");
  assert.deepEqual([offered(0), offered(1)], [["read_file"], ["read_file"]]);
  // maxTurns 2 (the user's), not 50: the second request is the last one and may call no tool.
  assert.deepEqual([server.requests.length, choice(0), choice(1)], [2, "auto", "none"]);
  rmSync(sb.root, { recursive: true, force: true });
});

test("a project config that narrows takes effect, also under the user's flags", async () => {
  const sb = makeSandbox(server.url);
  withProject(sb, { tools: { allowed: ["read_file", "write_file", "grep"], disallowed: [] }, maxTurns: 1 });
  server.enqueue({ text: "one" }, { text: "two" });
  const flagged = await sb.run(["run", "--headless", "--no-stdin", "--disallowed-tools", "write_file", "--max-turns", "5", "go"]);
  assert.equal(flagged.code, 0, flagged.stderr);
  assert.deepEqual(parseLines(flagged.stdout)[0]!.tools, ["read_file", "grep"]);
  assert.deepEqual([offered(0), choice(0)], [["read_file", "grep"], "none"], "the project's maxTurns 1 beats --max-turns 5");
  // A flag that names a tool the project left out does not bring it back.
  const widened = await sb.run(["run", "--headless", "--no-stdin", "--allowed-tools", "bash,read_file", "go"]);
  assert.equal(widened.code, 0, widened.stderr);
  assert.deepEqual(parseLines(widened.stdout)[0]!.tools, ["read_file"]);
  assert.deepEqual(server.unexpected, []);
  rmSync(sb.root, { recursive: true, force: true });
});

test("a project's permission mode only tightens: read-only refuses writes in keen run, and stdio cannot loosen it", async () => {
  const sb = makeSandbox(server.url);
  withProject(sb, { permissionMode: "read-only" });
  server.enqueue({ toolCalls: [{ name: "write_file", input: { path: "a.txt", content: "x" } }] }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "--permission-mode", "auto", "write it"]);
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  assert.equal(lines[0]!.permission_mode, "read-only");
  const result = lines.find((l) => l.kind === "tool-result")!;
  assert.equal(result.is_error, true);
  assert.match(result.result, /read-only/);

  // A user config that asks for less is narrowed the same way; a looser set-permission-mode is refused.
  withProject(sb, { permissionMode: "ask" });
  server.enqueue({ text: "hello" });
  const stdin = [
    { kind: "set-permission-mode", id: "m", mode: "auto" },
    { kind: "set-permission-mode", id: "r", mode: "accept-edits" },
    { kind: "prompt", id: "p", text: "hi" },
  ].map((c) => JSON.stringify(c)).join("\n");
  const s = await sb.run(["stdio", "--permission-mode", "auto"], { stdin: `${stdin}\n` });
  assert.equal(s.code, 0, s.stderr);
  const out = parseLines(s.stdout);
  assert.equal(out.find((l) => l.kind === "session-start")!.permission_mode, "ask");
  const responses = Object.fromEntries(out.filter((l) => l.kind === "response").map((l) => [l.id, l.ok]));
  assert.deepEqual(responses, { p: true, m: false, r: false });
  rmSync(sb.root, { recursive: true, force: true });
});
