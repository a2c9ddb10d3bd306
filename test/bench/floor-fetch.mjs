// The bare-Node floor for `npm run bench`: the least a program can do to get
// the same answer from the same Anthropic-format mock. One streaming request
// with the built-in fetch, SSE parsed minimally, each text delta printed on its
// own line as it arrives. If the reply is a tool call (the two-step case), run
// the command with `bash -c`, send the result back in a second request, and
// print that reply too. No dependencies, nothing loaded that this does not use.
// Env: ANTHROPIC_BASE_URL (required), ANTHROPIC_API_KEY.
import { execFile } from "node:child_process";

const base = process.env.ANTHROPIC_BASE_URL;
const prompt = process.argv[2] ?? "hello";
const tools = [{ name: "bash", description: "Run a command", input_schema: { type: "object", properties: { command: { type: "string" } } } }];
const messages = [{ role: "user", content: prompt }];

for (;;) {
  const reply = await request(messages);
  if (reply.toolCalls.length === 0) break;
  messages.push({ role: "assistant", content: reply.toolCalls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: JSON.parse(c.json || "{}") })) });
  const results = [];
  for (const call of reply.toolCalls) {
    const output = await new Promise((resolve) => execFile("bash", ["-c", JSON.parse(call.json).command], (_e, out, err) => resolve(out + err)));
    results.push({ type: "tool_result", tool_use_id: call.id, content: output });
  }
  messages.push({ role: "user", content: results });
}

async function request(messages) {
  const response = await fetch(`${base}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": process.env.ANTHROPIC_API_KEY ?? "k", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model: "floor", max_tokens: 1024, stream: true, tools, messages }),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  const toolCalls = [];
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const bytes of response.body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame.split("\n").find((line) => line.startsWith("data: "));
      if (!data) continue;
      const event = JSON.parse(data.slice(6));
      if (event.type === "content_block_delta" && event.delta.type === "text_delta") process.stdout.write(`${event.delta.text}\n`);
      else if (event.type === "content_block_delta" && event.delta.type === "input_json_delta") toolCalls.at(-1).json += event.delta.partial_json;
      else if (event.type === "content_block_start" && event.content_block.type === "tool_use") {
        toolCalls.push({ id: event.content_block.id, name: event.content_block.name, json: "" });
      }
    }
  }
  return { toolCalls };
}
