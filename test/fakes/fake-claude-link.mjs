#!/usr/bin/env node
// A stand-in for `claude -p <prompt> --output-format stream-json --verbose
// --include-partial-messages` over a real connection, for the link bench's test
// (test/build/bench-peers.test.ts): it makes one streaming request to
// $ANTHROPIC_BASE_URL/v1/messages (trusting NODE_EXTRA_CA_CERTS, as Node does)
// and prints each SSE event as a `stream_event` line, framed by an init line, the
// assistant message and a result line, shaped like the recorded fixtures.
import { randomUUID } from "node:crypto";

const argv = process.argv.slice(2);
const prompt = argv[argv.indexOf("-p") + 1];
if (!argv.includes("-p") || argv[argv.indexOf("--output-format") + 1] !== "stream-json" || !argv.includes("--include-partial-messages")) {
  process.stderr.write(`fake claude: unexpected arguments: ${argv.join(" ")}\n`);
  process.exit(2);
}
const session_id = randomUUID();
const print = (line) => process.stdout.write(`${JSON.stringify({ ...line, session_id, uuid: randomUUID() })}\n`);
print({ type: "system", subtype: "init", cwd: process.cwd(), tools: [], model: "claude-sonnet-4-5" });
const started = Date.now();
const res = await fetch(`${process.env.ANTHROPIC_BASE_URL}/v1/messages`, {
  method: "POST",
  headers: { "content-type": "application/json", "x-api-key": process.env.ANTHROPIC_API_KEY ?? "", "anthropic-version": "2023-06-01" },
  body: JSON.stringify({ model: "claude-sonnet-4-5", max_tokens: 1024, stream: true, messages: [{ role: "user", content: prompt }] }),
});
if (!res.ok) {
  process.stderr.write(`API Error: ${res.status} ${await res.text()}\n`);
  process.exit(1);
}
let text = "";
let pending = "";
const decoder = new TextDecoder();
for await (const chunk of res.body) {
  pending += decoder.decode(chunk, { stream: true });
  let end;
  while ((end = pending.indexOf("\n\n")) >= 0) {
    const data = /^data: (.*)$/m.exec(pending.slice(0, end))?.[1];
    pending = pending.slice(end + 2);
    if (!data) continue;
    const event = JSON.parse(data);
    if (event.type === "ping") continue;
    if (event.delta?.type === "text_delta") text += event.delta.text;
    print({ type: "stream_event", event, parent_tool_use_id: null });
  }
}
print({ type: "assistant", message: { role: "assistant", content: [{ type: "text", text }] }, parent_tool_use_id: null });
print({ type: "result", subtype: "success", is_error: false, duration_ms: Date.now() - started, num_turns: 1, result: text });
