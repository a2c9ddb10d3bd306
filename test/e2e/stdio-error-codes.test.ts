import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CommandSchema } from "../../protocol/commands.js";
import { ERROR_CODES, RESPONSE_DATA } from "../../protocol/responses.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox } from "./harness.js";
import { runScript, type ScriptRun } from "./stdio-client.js";

/*
 * docs/PROTOCOL.md's error codes, as a client of the real `keen stdio` meets
 * them: every failure the engine can tell apart is answered with its
 * `error_code` beside the `error` text, and `keen protocol schema` publishes
 * the codes and each command's response `data`.
 */
const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();

const script = (sb: ReturnType<typeof makeSandbox>, args: string[], commands: (Record<string, unknown> | string)[]) =>
  runScript(sb.run, ["--model", MODEL, ...args], commands);

/** [ok, error_code] of the response to `id`, the error text checked to be there when it failed. */
function answer(run: ScriptRun, id: string): [boolean, string | undefined] {
  const r = run.response(id);
  if (!r.ok) assert.equal(typeof r.error, "string", `${id} has its error text`);
  return [r.ok, r.error_code];
}

/** A sandbox with one stored session whose one turn wrote `a.txt`. */
async function withSession() {
  const sb = makeSandbox(server.url);
  server.enqueue({ toolCalls: [{ id: "w", name: "write_file", input: { path: "a.txt", content: "new\n" } }] }, { text: "Wrote a.txt." });
  // Setting the scene, so through main() in this process (a Keen start less); --sandbox off so the test
  // process starts no sandbox proxies (the turn runs write_file, no command). keen stdio below is real.
  const first = await sb.main(["run", "--model", MODEL, "--no-stdin", "--format", "json", "--sandbox", "off", "write a.txt"]);
  assert.equal(first.code, 0, first.stderr);
  return { sb, session: JSON.parse(first.stdout).session_id as string };
}

test("keen stdio: each refusal of a fresh session carries its error_code", async () => {
  const sb = makeSandbox(server.url);
  const run = await script(sb, ["--permission-mode", "read-only"], [
    { kind: "no-such-command", id: "bad" },
    { kind: "prompt", id: "empty", text: "   " },
    { kind: "permission-response", id: "pr", request_id: "nope", decision: "allow-once" },
    { kind: "set-permission-mode", id: "wider", mode: "auto" },
    { kind: "set-model", id: "unknown", model: "nosuch/model" },
    // The sandbox sets no OpenAI key.
    { kind: "set-model", id: "nokey", model: "openai/gpt-5.4" },
    { kind: "resume-session", id: "resume", session: "zzzz" },
    { kind: "undo", id: "undo" },
    { kind: "compact", id: "compact" },
    { kind: "shutdown", id: "s" },
    { kind: "list-sessions", id: "late" },
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(
    ["bad", "empty", "pr", "wider", "unknown", "nokey", "resume", "undo", "compact", "s", "late"].map((id) => [id, ...answer(run, id)]),
    [
      ["bad", false, "invalid"], ["empty", false, "empty_prompt"], ["pr", false, "no_request"], ["wider", false, "permission_ceiling"],
      ["unknown", false, "unknown_model"], ["nokey", false, "no_provider"], ["resume", false, "unknown_session"],
      ["undo", false, "nothing_to_undo"], ["compact", false, "nothing_to_compact"], ["s", true, undefined], ["late", false, "shutting_down"],
    ],
  );
  assert.equal(run.response("bad").command, "invalid");
});

test("keen stdio: a switch during a turn is `busy`; a prompt an interrupt drops is `interrupted`", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ text: "A long answer that is cut short.", chunkSize: 4, delayMs: 400 });
  const run = await script(sb, [], [
    { kind: "prompt", id: "p1", text: "talk" },
    { kind: "new-session", id: "n" },
    { kind: "prompt", id: "p2", text: "never" },
    { kind: "interrupt", id: "i" },
  ]);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(answer(run, "n"), [false, "busy"]);
  assert.deepEqual(answer(run, "p2"), [false, "interrupted"]);
});

test("keen stdio: undo of a file changed since the turn is `undo_refused`; a failed compaction is `compaction_failed`", async () => {
  const { sb, session } = await withSession();
  writeFileSync(join(sb.workspace, "a.txt"), "changed by hand\n");
  server.enqueue({ kind: "http-error", status: 401 });
  const run = await script(sb, ["--session", session], [{ kind: "undo", id: "u", confirm: true }, { kind: "compact", id: "c" }]);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(answer(run, "u"), [false, "undo_refused"]);
  assert.deepEqual(answer(run, "c"), [false, "compaction_failed"]);
});

test("keen stdio: a provider failure is an `error` event with error_code provider; the prompt itself is answered ok", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ kind: "http-error", status: 401 });
  const run = await script(sb, [], [{ kind: "prompt", id: "p", text: "hi" }]);
  assert.equal(run.code, 0, run.stderr);
  const errors = run.lines.filter((l) => l.kind === "error");
  assert.equal(errors.length, 1);
  assert.equal(errors[0]!.error_code, "provider");
  assert.deepEqual([run.response("p").ok, run.response("p").data.status], [true, "error"]);
});

test("keen protocol schema publishes the error codes and each command's response data", async () => {
  const sb = makeSandbox(server.url);
  // Through main() in this process (a Keen start less): what it prints is Keen's own; test/e2e/protocol-check.ts
  // reads it from a real process for every stream it checks.
  const r = await sb.main(["protocol", "schema"]);
  assert.equal(r.code, 0, r.stderr);
  const schema = JSON.parse(r.stdout) as { $defs: Record<string, { type?: string; properties?: Record<string, unknown>; items?: unknown }> };
  const withData = Object.entries(RESPONSE_DATA).filter(([, s]) => s.def.type !== "undefined").map(([kind]) => kind);
  const kinds = CommandSchema.options.map((o) => o.shape.kind.value);
  assert.deepEqual(withData.sort(), kinds.filter((k) => k !== "permission-response" && k !== "shutdown").sort());
  for (const kind of withData) assert.ok(schema.$defs[`response-data.${kind}`], `response-data.${kind} is published`);
  assert.deepEqual(Object.keys(schema.$defs["response-data.prompt"]!.properties!).sort(), ["session_id", "status"]);
  assert.equal(schema.$defs["response-data.list-models"]!.type, "array");
  // The code enum appears where the response event is described.
  const text = r.stdout;
  for (const code of Object.keys(ERROR_CODES)) assert.ok(text.includes(`"${code}"`), `${code} is in the schema`);
  assert.match(text, /"error_code"/);
});
