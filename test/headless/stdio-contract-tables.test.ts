import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { commandJsonSchema } from "../../protocol/commands.js";
import { protocolJsonSchema } from "../../protocol/jsonl.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "../cli/in-process.js";
import { stdioInProcess, type InProcessRun } from "./stdio-in-process.js";

/*
 * Tables of keen stdio's answers (docs/PROTOCOL.md), run through keen stdio's
 * own function in this process: they were five spawned processes in
 * test/e2e/stdio-contract.test.ts, which keeps what the real process does
 * (EOF, ordering, interrupts, signals). The sandbox plays no role in these
 * answers (the one tool that runs is `echo`): off, so none starts here.
 */
const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();

/** Responses in the order written, as [id, command, ok]. */
const answers = (run: InProcessRun) => run.lines.filter((l) => l.kind === "response").map((l) => [l.id, l.command, l.ok]);

test("set-permission-mode never goes wider than --permission-mode or the user config's mode; unset, a client may widen it", async () => {
  const sb = makeInProcessSandbox(server);
  const bash = () => server.enqueue({ toolCalls: [{ id: "b", name: "bash", input: { command: "echo ran" } }] }, { text: "done" });
  bash();
  const flag = await stdioInProcess({ model: MODEL, sandbox: "off", permissionMode: "read-only" }, sb.env, sb.workspace, [
    { kind: "set-permission-mode", id: "auto", mode: "auto" },
    { kind: "set-permission-mode", id: "ask", mode: "ask" },
    { kind: "set-permission-mode", id: "ro", mode: "read-only" },
    { kind: "prompt", id: "p", text: "run it" },
  ]);
  assert.equal(flag.code, 0);
  assert.equal(flag.response("auto").error, "permission mode auto is wider than read-only, the mode this process was started with (--permission-mode)");
  assert.equal(flag.response("ask").error, "permission mode ask is wider than read-only, the mode this process was started with (--permission-mode)");
  assert.equal(flag.response("ro").ok, true);
  assert.equal(flag.lines.filter((l) => l.kind === "permission-request").length, 0);
  assert.deepEqual(flag.lines.filter((l) => l.kind === "tool-result").map((l) => [l.is_error, l.result]), [
    [true, "Not executed: the session is in read-only mode, so bash cannot run."],
  ]);

  const configured = makeInProcessSandbox(server, { permissionMode: "ask" });
  const config = await stdioInProcess({ model: MODEL, sandbox: "off" }, configured.env, configured.workspace, [
    { kind: "set-permission-mode", id: "auto", mode: "auto" },
    { kind: "set-permission-mode", id: "edits", mode: "accept-edits" },
    { kind: "set-permission-mode", id: "ro", mode: "read-only" },
    { kind: "set-permission-mode", id: "ask", mode: "ask" },
  ]);
  assert.equal(config.code, 0);
  const file = join(configured.home, "config.json");
  assert.equal(config.response("auto").error, `permission mode auto is wider than ask, the mode this process was started with (permissionMode in ${file})`);
  assert.equal(config.response("edits").ok, false);
  assert.deepEqual([config.response("ro").ok, config.response("ask").ok], [true, true]);

  bash();
  const unset = await stdioInProcess({ model: MODEL, sandbox: "off" }, sb.env, sb.workspace, [
    { kind: "set-permission-mode", id: "auto", mode: "auto" }, { kind: "prompt", id: "p", text: "run it" },
  ]);
  assert.equal(unset.response("auto").ok, true);
  assert.equal(unset.lines.filter((l) => l.kind === "permission-request").length, 0);
  assert.deepEqual(unset.lines.filter((l) => l.kind === "tool-result").map((l) => [l.is_error, l.result.trim()]), [[false, "ran"]]);
});

test("list-models marks the session's model: the start-up one, then the one set-model chose", async () => {
  const sb = makeInProcessSandbox(server);
  const run = await stdioInProcess({ model: "anthropic/claude-sonnet-5-5", sandbox: "off" }, sb.env, sb.workspace, [
    { kind: "list-models", id: "before" },
    { kind: "set-model", id: "set", model: "anthropic/claude-haiku-5-5" },
    { kind: "list-models", id: "after" },
  ]);
  assert.equal(run.code, 0);
  const current = (id: string) => run.response(id).data.filter((m: { current: boolean }) => m.current).map((m: { model: string }) => m.model);
  assert.deepEqual(current("before"), ["anthropic/claude-sonnet-5-5"]);
  assert.deepEqual(current("after"), ["anthropic/claude-haiku-5-5"]);
});

test("a number id is echoed as the same number (also on a line that is not a valid command); the schema says string or number", async () => {
  const sb = makeInProcessSandbox(server);
  server.enqueue({ text: "hi" });
  const run = await stdioInProcess({ model: MODEL, sandbox: "off" }, sb.env, sb.workspace, [
    { kind: "list-sessions", id: 7 },
    { kind: "set-model", id: 8 },
    { kind: "list-models", id: "8" },
    { kind: "fly", id: 9.5 },
    { kind: "interrupt", id: -1 },
    { kind: "prompt", id: 0, text: "hello" },
  ]);
  assert.equal(run.code, 0);
  assert.deepEqual(answers(run).map(([id, command, ok]) => [id, typeof id, command, ok]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))), [
    [-1, "number", "interrupt", true],
    [0, "number", "prompt", true],
    [7, "number", "list-sessions", true],
    [8, "number", "invalid", false],
    ["8", "string", "list-models", true],
    [9.5, "number", "invalid", false],
  ]);
  // The schemas `keen protocol schema [--commands]` prints (test/e2e/stdio.test.ts and stdio-error-codes.test.ts run the command itself).
  const schema = commandJsonSchema() as { oneOf: { properties: { id: { anyOf: unknown }; kind: { const: string } } }[] };
  for (const option of schema.oneOf) assert.deepEqual(option.properties.id.anyOf, [{ type: "string" }, { type: "number" }], option.properties.kind.const);
  assert.match(JSON.stringify(protocolJsonSchema()), /"id":\{"anyOf":\[\{"type":"string"\},\{"type":"number"\}\]\}/);
});
