import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { KEEN_BIN, makeSandbox, waitForStdout } from "./harness.js";

const server = useMockLLMServer();
// For the tests whose model answers with text only: no tool runs, the sandbox plays no role and is
// off (with bash available, every turn would warm it up: ~0.25 s of CPU per Keen).
const TEXT_ONLY = { sandbox: { mode: "off" } };

const noScript = spawnSync("script", ["--version"]).status !== 0 && "needs script(1) from util-linux for a pseudo-terminal";

/** `keen <args>` with stdout and stderr on a pseudo-terminal (script(1)); what the terminal received, CRLF → LF. */
function inPty(args: string[]): string[] {
  const quoted = args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  return ["-qec", `${KEEN_BIN} ${quoted}`, "/dev/null"];
}
const lf = (s: string) => s.replace(/\r\n/g, "\n");

test("on a terminal, text mode streams the answer, tool activity and the session id", { skip: noScript }, async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ text: "Let me look.", toolCalls: [{ name: "bash", input: { command: "echo hi" } }] }, { text: "All done." });
  const r = await sb.run(inPty(["run", "--no-stdin", "say hi"]), { bin: "script" });
  assert.equal(r.code, 0, r.stderr);
  const [session] = await sb.sessions();
  assert.equal(lf(r.stdout), [
    "Let me look.",
    "keen: bash echo hi",
    "keen:   bash done",
    "All done.",
    `keen: done · session ${session!.id} · continue with: keen run -s ${session!.id} "…" (or keen run -c in this directory)`,
    "",
  ].join("\n"));
});

test("piped, text mode prints the final text only and nothing on stderr", async () => {
  const sb = makeSandbox(server.url);
  server.enqueue({ text: "Let me look.", toolCalls: [{ name: "bash", input: { command: "echo hi" } }] }, { text: "All done." });
  const r = await sb.run(["run", "--no-stdin", "say hi"]);
  assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 0, stdout: "All done.\n", stderr: "" });
});

test("on a terminal, a retry is shown on stderr and the answer starts again", { skip: noScript }, async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  server.enqueue({ text: "Half an answer", cutAfterChunks: 4, chunkSize: 5 }, { text: "Whole answer." });
  const r = await sb.run(inPty(["run", "--no-stdin", "hi"]), { bin: "script" });
  assert.equal(r.code, 0, r.stderr);
  const out = lf(r.stdout);
  assert.match(out, /keen: retrying in \d+\.\ds \(attempt 2\)/);
  assert.match(out, /Whole answer\.\n/);
});

test("Ctrl-C on a terminal keeps what was said, and stderr names the session and how to resume it", { skip: noScript }, async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  server.enqueue({ text: "The first part of the answer", chunkSize: 9, stallAfterChunks: 5 });
  let sent = false;
  const r = await sb.run(inPty(["run", "--no-stdin", "hi"]), {
    bin: "script", stdin: "open",
    // Ctrl-C once what streams before the stall ("The first part of") is on the screen.
    onSpawn: (child) => void waitForStdout(child, (s) => s.includes("part of")).then(() => {
      sent = true;
      child.stdin!.write("\x03");
    }, () => {}),
  });
  assert.ok(sent, "the partial answer was streamed before Ctrl-C");
  const [session] = await sb.sessions();
  assert.equal(session!.status, "interrupted");
  // The terminal echoes the key as "^C" wherever the stream had got to.
  const out = lf(r.stdout).replace("^C", "");
  assert.match(out, /^The first part of/);
  assert.match(out, new RegExp(`keen: interrupted · session ${session!.id} · continue with: keen run -s ${session!.id}`));
});

test("--continue resumes the most recent session of the working directory", async () => {
  const sb = makeSandbox(server.url, TEXT_ONLY);
  server.enqueue({ text: "one" }, { text: "elsewhere" }, { text: "two" });
  assert.equal((await sb.run(["run", "--no-stdin", "first"])).code, 0);
  assert.equal((await sb.run(["run", "--no-stdin", "--cwd", sb.root, "other dir"])).code, 0);
  const r = await sb.run(["run", "-c", "--no-stdin", "again"]);
  assert.deepEqual({ code: r.code, stdout: r.stdout }, { code: 0, stdout: "two\n" });
  const sessions = await sb.sessions();
  assert.equal(sessions.length, 2);
  const texts = server.requests[2]!.body.messages.map((m: any) => m.content.map((c: any) => c.text).join(""));
  assert.deepEqual(texts, ["first", "one", "again"]);
  const none = await makeSandbox(server.url, TEXT_ONLY).run(["run", "--continue", "--no-stdin", "x"]);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /--continue: no session in .* yet/);
  const both = await sb.run(["run", "-c", "-s", "abc", "--no-stdin", "x"]);
  assert.equal(both.code, 2);
});
