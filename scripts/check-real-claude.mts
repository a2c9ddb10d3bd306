// By hand, never in CI: runs `keen run --runner cli` twice (new session, then --resume) through the real
// `claude` (CLAUDE_PATH) against the mock LLM server. Usage: npm install --prefix /tmp/cc @anthropic-ai/claude-code,
// then CLAUDE_PATH=/tmp/cc/node_modules/.bin/claude node --import tsx scripts/check-real-claude.mts
import { spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
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
await server.close();
