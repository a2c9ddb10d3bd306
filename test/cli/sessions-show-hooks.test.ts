import { test } from "node:test";
import assert from "node:assert/strict";
import { HookEvent } from "../../protocol/events.js";
import { openStore } from "../../storage/level-store.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";

// `keen sessions show` of a session with hook events, in this process (test/cli/in-process.ts).
// A hook is a command, and a unit test spawns none: the event is the one test/e2e/hooks.test.ts
// sees a blocking PreToolUse hook store (checked against the protocol's schema), appended to a
// stored text turn.

const server = useMockLLMServer();

test("sessions show: a hook that did not end ok is a line with its event, tool, outcome and reason; an ok hook is not shown", async () => {
  const sb = makeInProcessSandbox(server);
  server.enqueue({ text: "I will not delete it." });
  const id = (await sb.runJson(["delete keep.txt"])).session_id as string;
  const hook = (outcome: "ok" | "blocked", message?: string) => HookEvent.parse({
    kind: "hook", conversation_id: id, ts: Date.now(), hook_event: "PreToolUse", matcher: "Bash|Edit",
    command: "node guard.js", source: "user", outcome, duration_ms: 12, tool_name: "bash", tool_call_id: "toolu_rm",
    ...(outcome === "blocked" ? { decision: "block", exit_code: 2 } : { exit_code: 0 }), ...(message ? { message } : {}),
  });
  await openStore(sb.home).append(id, [hook("blocked", "rm is not allowed here; move files to trash/ instead"), hook("ok")]);
  const shown = await sb.keen(["sessions", "show", id]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /\[hook PreToolUse bash blocked\] rm is not allowed here; move files to trash\/ instead/);
  assert.equal(shown.stdout.match(/\[hook /g)!.length, 1, shown.stdout);
});
