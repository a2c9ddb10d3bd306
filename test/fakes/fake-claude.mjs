#!/usr/bin/env node
// A stand-in for `claude -p --output-format stream-json`: replays recorded
// fixtures (test/fixtures/claude-stream-json/) and records its argv, stdin and
// pid. FAKE_CLAUDE_LOG: file to append one JSON line per run to.
// FAKE_CLAUDE_SCRIPTS: comma list of `fixture[:exit code]`, the n-th run plays
// the n-th (the last repeats). `hang` prints init, starts a grandchild and waits.
// Given `--permission-prompt-tool mcp__<server>__<tool>`, it acts out the CLI's
// ask before each tool result: spawns <server> from `--mcp-config` (as the CLI
// does), calls <tool> with `{tool_name, input, tool_use_id}` through the MCP
// SDK's client, records the answer, and on a denial replays the tool result as
// the denial and the answer as "I was not allowed to run it." It never runs a
// tool: an allowed call's result is the recorded one.
import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const fixtures = join(dirname(fileURLToPath(import.meta.url)), "../fixtures/claude-stream-json");
const argv = process.argv.slice(2);
const log = process.env.FAKE_CLAUDE_LOG;
const runs = log && existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).length : 0;
const scripts = (process.env.FAKE_CLAUDE_SCRIPTS ?? "text-thinking").split(",");
const [name, exit] = scripts[Math.min(runs, scripts.length - 1)].split(":");
const DENIED = "I was not allowed to run it.";
const flag = (f) => (argv.includes(f) ? argv[argv.indexOf(f) + 1] : undefined);

let stdin = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d) => (stdin += d));
process.stdin.on("end", async () => {
  const record = { argv, stdin, pid: process.pid, cwd: process.cwd() };
  const lines = readFileSync(join(fixtures, `${name}.jsonl`), "utf8").split("\n").filter((l) => l !== "");
  const recorded = JSON.parse(lines[0]).session_id;
  const id = flag("--resume") ?? flag("--session-id") ?? recorded;
  if (process.env.FAKE_CLAUDE_STDERR) process.stderr.write(process.env.FAKE_CLAUDE_STDERR);
  if (name === "hang") {
    const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    record.grandchild = child.pid;
  }
  const ask = flag("--permission-prompt-tool") ? await connectAsker(flag("--permission-prompt-tool"), flag("--mcp-config")) : undefined;
  // A run that asks is logged once it has its answers; any other before its output (a hang never ends).
  if (log && !ask) appendFileSync(log, JSON.stringify(record) + "\n");
  const uses = new Map();
  let denied;
  for (const raw of lines) {
    // The fixtures' working directory stands for the one the CLI runs in.
    let line = raw.replaceAll(recorded, id).replaceAll("/home/user/project", process.cwd());
    // Without an asker the lines go out as recorded, malformed ones included.
    if (!ask) {
      process.stdout.write(line + "\n");
      continue;
    }
    const frame = JSON.parse(line);
    for (const part of frame.type === "assistant" ? frame.message.content : []) if (part.type === "tool_use") uses.set(part.id, part);
    const result = frame.type === "user" ? frame.message.content.find((p) => p.type === "tool_result") : undefined;
    if (ask && result) {
      const use = uses.get(result.tool_use_id);
      const answer = await ask({ tool_name: use.name, input: use.input, tool_use_id: use.id });
      (record.asks ??= []).push(answer);
      if (answer.behavior === "deny") {
        denied = DENIED;
        Object.assign(result, { content: answer.message, is_error: true });
        delete frame.tool_use_result;
        line = JSON.stringify(frame);
      }
    }
    // After a denial the answer says so: the first text delta carries it all, the complete frames and the result too.
    if (denied && frame.type === "stream_event" && frame.event.delta?.type === "text_delta") {
      if (denied === true) continue;
      frame.event.delta.text = DENIED;
      line = JSON.stringify(frame);
      denied = true;
    } else if (denied && frame.type === "assistant") {
      for (const part of frame.message.content) if (part.type === "text") part.text = DENIED;
      line = JSON.stringify(frame);
    } else if (denied && frame.type === "result") {
      frame.result = DENIED;
      line = JSON.stringify(frame);
    }
    process.stdout.write(line + "\n");
  }
  await ask?.close();
  if (log && ask) appendFileSync(log, JSON.stringify(record) + "\n");
  if (name === "hang") return void setInterval(() => {}, 1000);
  process.exitCode = Number(exit ?? 0);
});

/** Starts the permission prompt tool's MCP server from the CLI's `--mcp-config` (a JSON string here) and returns a caller of it. */
async function connectAsker(toolRef, mcpConfig) {
  const [, server, tool] = toolRef.split("__");
  const spec = JSON.parse(mcpConfig).mcpServers[server];
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const client = new Client({ name: "fake-claude", version: "0" });
  await client.connect(new StdioClientTransport({ command: spec.command, args: spec.args, env: { ...process.env, ...spec.env } }));
  const call = async (args) => {
    const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 600_000 });
    return JSON.parse(result.content[0].text);
  };
  return Object.assign(call, { close: () => client.close() });
}
