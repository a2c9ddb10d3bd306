import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";
import { stdioFromFlags } from "../../app/cli/stdio.js";
import { closePreconnect } from "../../app/providers/preconnect.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "../cli/in-process.js";
import { stdioInProcess } from "./stdio-in-process.js";

/*
 * A client that writes a prompt and closes stdin (`printf … | keen stdio`, the docs' own example
 * without --permission-mode auto) cannot answer a permission-request. keen stdio used to wait for
 * that answer for ever: the process never exited (found with `{ echo '{"kind":"prompt",…}'; sleep 2; }
 * | keen stdio`). Once the input has ended, an open ask and every later one are refused with a
 * reason for the model, as one-shot `keen run` refuses them, and the turn runs to its result.
 */
const server = useMockLLMServer();
const MODEL = "anthropic/claude-test";
const REFUSED = /^Not executed: write_file needs the user's approval in ask mode, and the client's input has ended: nobody can answer\. Do without it\.$/;

/** Rejects after 15 s: before the fix these runs never ended. */
async function bounded<T>(run: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("keen stdio did not exit after EOF: it waits for a permission answer nobody can send")), 15_000)));
  return Promise.race([run, hung]).finally(() => clearTimeout(timer));
}

function enqueueWrite() {
  server.enqueue({ toolCalls: [{ id: "w", name: "write_file", input: { path: "a.txt", content: "new\n" } }] }, { text: "I could not write a.txt." });
}

function checkRefused(lines: Record<string, any>[], workspace: string) {
  const result = lines.find((l) => l.kind === "tool-result")!;
  assert.equal(result.is_error, true);
  assert.match(result.result, REFUSED);
  assert.deepEqual([lines.find((l) => l.kind === "result")!.status, lines.at(-1)!.kind, lines.at(-1)!.ok], ["success", "response", true]);
  assert.equal(existsSync(join(workspace, "a.txt")), false);
  // The model saw the refusal and answered.
  assert.match(JSON.stringify(server.requests[1]!.body.messages.at(-1)), /nobody can answer/);
  assert.equal(server.pending(), 0);
}

test("stdin ends while a permission-request waits: it is refused for the model, the turn ends with its result, keen stdio exits 0", async () => {
  const sb = makeInProcessSandbox(server);
  enqueueWrite();
  const saved = Object.fromEntries(Object.keys(sb.env).map((k) => [k, process.env[k]]));
  const set = (values: Record<string, string | undefined>) => {
    for (const [k, v] of Object.entries(values)) (v === undefined ? delete process.env[k] : (process.env[k] = v));
  };
  const stdin = new PassThrough();
  let out = "";
  // The client reads the permission-request, then closes stdin without answering.
  const stdout = new Writable({
    write(chunk, _encoding, done) {
      out += String(chunk);
      if (out.includes('"kind":"permission-request"')) stdin.end();
      done();
    },
  });
  stdin.write(`${JSON.stringify({ kind: "prompt", id: "p", text: "write a.txt" })}\n`);
  const here = process.cwd();
  set(sb.env);
  process.chdir(sb.workspace);
  let code: number;
  try {
    code = await bounded(stdioFromFlags({ model: MODEL, sandbox: "off" }, false, { stdin, stdout }));
  } finally {
    process.chdir(here);
    set(saved);
    // The run's early connection ends with it, as with a real Keen's process (test/cli/in-process.ts says why).
    await closePreconnect();
  }
  assert.equal(code, 0);
  const lines = out.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);
  const kinds = lines.map((l) => l.kind).filter((k) => !k.endsWith("-delta") && k !== "content-end");
  assert.deepEqual(kinds, ["session-start", "text", "tool-use", "permission-request", "tool-result", "text", "result", "response"]);
  checkRefused(lines, sb.workspace);
});

test("stdin ended before the turn asks: no permission-request is sent (nobody could answer it), the call is refused for the model", async () => {
  const sb = makeInProcessSandbox(server);
  enqueueWrite();
  const run = await bounded(stdioInProcess({ model: MODEL, sandbox: "off" }, sb.env, sb.workspace, [{ kind: "prompt", id: "p", text: "write a.txt" }]));
  assert.equal(run.code, 0);
  assert.ok(!run.lines.some((l) => l.kind === "permission-request"));
  checkRefused(run.lines, sb.workspace);
});
