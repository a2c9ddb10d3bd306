import { test } from "node:test";
import assert from "node:assert/strict";
import { validateSessionFlags } from "../../app/cli/session-flags.js";
import { validateRunFlags } from "../../app/cli/run-flags.js";
import { EXIT, exitCodeForResult, exitCodeForSignal, exitCodeForStop } from "../../app/cli/signals.js";
import type { RunResult } from "../../protocol/result.js";

test("the shared session flags are validated in one place: every front end gets the same settings and the same one-line errors", () => {
  const flags = {
    model: "openai/gpt-x", permissionMode: "accept-edits", allowedTools: "read_file, bash,", disallowedTools: "mcp__db__*", maxTurns: "4",
    runner: "embedded", sandbox: "off", mcpConfig: ["a.json"],
  };
  const expected = {
    model: "openai/gpt-x", permissionMode: "accept-edits", allowedTools: ["read_file", "bash"], disallowedTools: ["mcp__db__*"], maxTurns: 4,
    runner: "embedded", sandbox: "off", mcpConfig: ["a.json"],
  };
  assert.deepEqual(validateSessionFlags(flags), expected);
  // keen run (and stdio) add their own flags on top of the same validation.
  const run = validateRunFlags({ ...flags, stdin: true }, false);
  assert.deepEqual(Object.fromEntries(Object.keys(expected).map((k) => [k, run[k as keyof typeof run]])), expected);
  assert.deepEqual(validateSessionFlags({}), {});

  for (const [bad, message] of [
    [{ permissionMode: "yolo" }, /^--permission-mode must be one of auto, accept-edits, ask, read-only, not "yolo"$/],
    [{ maxTurns: "0" }, /^--max-turns must be a positive integer, not "0"$/],
    [{ model: " " }, /^--model needs <provider>\/<model>$/],
    [{ runner: "docker" }, /^--runner must be cli or embedded, not "docker"$/],
    [{ sandbox: "maybe" }, /^--sandbox must be on, off or auto, not "maybe"$/],
    [{ record: "a", replay: "b" }, /^--record and --replay cannot be combined$/],
  ] as const) {
    assert.throws(() => validateSessionFlags(bad), (error: Error & { exitCode?: number }) => message.test(error.message) && error.exitCode === EXIT.usage);
  }
});

test("one exit-code table: a signal's stop is 128 + its number, a gone reader SIGPIPE's, a timeout a failure", () => {
  assert.deepEqual(
    [exitCodeForStop(undefined), exitCodeForStop("sigint"), exitCodeForStop("sigterm"), exitCodeForStop("sighup"), exitCodeForStop("epipe"), exitCodeForStop("timeout")],
    [0, 130, 143, 129, 141, 1],
  );
  assert.deepEqual([exitCodeForSignal(undefined), exitCodeForSignal("SIGINT"), exitCodeForSignal("SIGHUP"), exitCodeForSignal("SIGTERM")], [0, 130, 129, 143]);
  const result = (status: RunResult["status"], is_error: boolean) => ({ status, is_error }) as RunResult;
  assert.equal(exitCodeForResult(undefined, undefined), 1);
  assert.equal(exitCodeForResult(result("success", false), undefined), 0);
  assert.equal(exitCodeForResult(result("error", true), undefined), 1);
  assert.equal(exitCodeForResult(result("max_turns", true), undefined), 3);
  assert.equal(exitCodeForResult(result("max_turns", false), undefined), 0);
  assert.equal(exitCodeForResult(result("interrupted", true), "sigterm"), 143);
  assert.equal(exitCodeForResult(result("interrupted", true), "timeout"), 1);
});
