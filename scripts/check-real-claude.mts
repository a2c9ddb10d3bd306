// By hand, never in CI: runs `keen run --runner cli` twice (new session, then --resume), then `keen stdio
// --runner cli --permission-mode ask` (a Bash call asked, denied, then asked again and allowed; a Write with its diff) through the
// real `claude` (CLAUDE_PATH) against the mock LLM server. Usage: npm install --prefix /tmp/cc @anthropic-ai/claude-code,
// then CLAUDE_PATH=/tmp/cc/node_modules/.bin/claude node --import tsx scripts/check-real-claude.mts
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockLLMServer } from "../test/fakes/mock-llm-server.ts";

const server = await startMockLLMServer();
for (let i = 0; i < 3; i++) server.enqueue({ thinking: "Keep it short.", text: "Hello from the mock." });
const root = mkdtempSync(join(tmpdir(), "keen-real-cli-"));
mkdirSync(join(root, "home")); mkdirSync(join(root, "ws")); mkdirSync(join(root, "user"));
writeFileSync(join(root, "home", "config.json"), JSON.stringify({ agents: { defaults: { cli: { path: process.env.CLAUDE_PATH ?? "claude", timeoutMs: 60000 } } } }));
const env = { ...process.env, KEEN_HOME: join(root, "home"), HOME: join(root, "user"), ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "dummy",
  DISABLE_TELEMETRY: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1", KEEN_DEBUG: "1" };
const run = (args: string[]) => new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
  const child = spawn(new URL("../bin/keen", import.meta.url).pathname, args, { cwd: join(root, "ws"), env });
  let stdout = "", stderr = "";
  child.stdout.on("data", (d) => (stdout += d)); child.stderr.on("data", (d) => (stderr += d));
  child.stdin.end();
  child.on("close", (code) => resolve({ code, stdout, stderr }));
});
const first = await run(["run", "--runner", "cli", "--headless", "--stream-deltas", "--model", "anthropic/claude-sonnet-4-5", "say hi"]);
console.log("FIRST", first.code, first.stdout, first.stderr);
const id = JSON.parse(first.stdout.trim().split("\n").at(-1)!).session_id;
const second = await run(["run", "--session", id, "--format", "json", "say it again"]);
console.log("SECOND", second.code, second.stdout, second.stderr);
console.log("REQUESTS", server.requests.length, server.unexpected, server.requests.map((r) => r.body?.messages?.length));

// Ask mode: the CLI's permission asks reach Keen's permission flow through the relay.
server.reset();
// `echo` would run unasked (the CLI deems it read-only): `touch` is asked about. Thinking on: the mock demands it before tool use.
const bash = (file: string) => ({ thinking: "Create it.", toolCalls: [{ name: "Bash", input: { command: `touch ${file}`, description: "create" } }] });
server.enqueue(bash("denied.txt"), { text: "It was denied." }, bash("allowed.txt"), { text: "Created allowed.txt." });
// A Write of a new file (the CLI refuses to overwrite a file it has not read, before asking): its ask carries Keen's diff.
server.enqueue({ thinking: "Write it.", toolCalls: [{ name: "Write", input: { file_path: join(root, "ws", "notes.txt"), content: "new line\n" } }] }, { text: "Wrote notes.txt." });
for (let i = 0; i < 6; i++) server.enqueue({ text: "spare" });
const stdio = spawn(new URL("../bin/keen", import.meta.url).pathname, ["stdio", "--runner", "cli", "--permission-mode", "ask"], { cwd: join(root, "ws"), env });
let buffer = "";
const answers = ["deny", "allow-once", "allow-once"];
let prompts = 1;
stdio.stderr.on("data", (d) => process.stderr.write(`STDERR ${d}`));
stdio.stdout.setEncoding("utf8").on("data", (d: string) => {
  buffer += d;
  for (let at = buffer.indexOf("\n"); at >= 0; at = buffer.indexOf("\n")) {
    const line = JSON.parse(buffer.slice(0, at));
    buffer = buffer.slice(at + 1);
    if (!line.kind.endsWith("-delta")) console.log("ASK", JSON.stringify(line).slice(0, 400));
    if (line.kind === "permission-request") {
      stdio.stdin.write(JSON.stringify({ kind: "permission-response", request_id: line.request_id, decision: answers.shift(), message: "not this one" }) + "\n");
    }
    if (line.kind === "result" && prompts++ < 3) stdio.stdin.write(JSON.stringify({ kind: "prompt", text: "run it again" }) + "\n");
    else if (line.kind === "result") stdio.stdin.end();
  }
});
stdio.stdin.write(JSON.stringify({ kind: "prompt", text: "run echo" }) + "\n");
await new Promise((resolve) => stdio.on("close", resolve));
console.log("FILES", (await import("node:fs")).readdirSync(join(root, "ws")));
console.log("ASK REQUESTS", server.requests.length, server.unexpected, JSON.stringify(server.requests.map((r) => r.body?.messages?.at(-1)?.content)).slice(0, 3000));
await server.close();
rmSync(root, { recursive: true, force: true });
