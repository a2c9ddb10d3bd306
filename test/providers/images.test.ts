import assert from "node:assert/strict";
import { test } from "node:test";
import { buildAnthropicRequest } from "../../app/providers/anthropic.js";
import { buildOpenAIRequest } from "../../app/providers/openai.js";
import type { ProviderOptions } from "../../app/providers/options.js";
import type { Message } from "../../protocol/messages.js";
import type { ProviderRequest } from "../../protocol/provider.js";
import { messageTokens } from "../../app/agent/compaction.js";

/* The provider-neutral image part, and images a tool returned, in each vendor's wire shape. */

const DATA = Buffer.from("png bytes stand-in").toString("base64");
const TOOL_DATA = Buffer.from("screenshot stand-in").toString("base64");

const conversation: Message[] = [
  { role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image", media_type: "image/png", data: DATA, name: "shot.png" }] },
  { role: "assistant", content: [{ type: "tool_call", id: "call_1", name: "read_file", input: { path: "b.jpg" } }] },
  {
    role: "user",
    content: [{ type: "tool_result", tool_call_id: "call_1", content: "Image b.jpg (jpeg, 2x2, 20 bytes), attached.", is_error: false, images: [{ media_type: "image/jpeg", data: TOOL_DATA }] }],
  },
];
const request: ProviderRequest = { system: "", messages: conversation, tools: [], sessionId: "s" };
const options = (kind: "anthropic" | "openai", extra: Partial<ProviderOptions> = {}): ProviderOptions => ({ kind, model: "m", apiKey: "k", maxOutputTokens: 100, ...extra });

test("Anthropic: a prompt's image is an image block with a base64 source; a tool's image goes inside its tool_result", () => {
  const body = buildAnthropicRequest(options("anthropic"), request);
  assert.deepEqual(body.messages[0]!.content, [
    { type: "text", text: "what is this?" },
    { type: "image", source: { type: "base64", media_type: "image/png", data: DATA } },
  ]);
  const result = (body.messages[2]!.content as any[])[0];
  assert.equal(result.type, "tool_result");
  assert.deepEqual(result.content, [
    { type: "text", text: "Image b.jpg (jpeg, 2x2, 20 bytes), attached." },
    { type: "image", source: { type: "base64", media_type: "image/jpeg", data: TOOL_DATA } },
  ]);
});

test("OpenAI chat: a prompt's image is an image_url data URL part; a tool's image follows the tool message in a user message", () => {
  const body = buildOpenAIRequest(options("openai"), request);
  assert.deepEqual(body.messages[0], {
    role: "user",
    content: [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: `data:image/png;base64,${DATA}` } }],
  });
  // Chat Completions refuses images in a tool message: the tool answer stays text, the image comes right after it.
  assert.deepEqual(body.messages.slice(2), [
    { role: "tool", tool_call_id: "call_1", content: "Image b.jpg (jpeg, 2x2, 20 bytes), attached." },
    {
      role: "user",
      content: [{ type: "text", text: "The image returned by tool call call_1:" }, { type: "image_url", image_url: { url: `data:image/jpeg;base64,${TOOL_DATA}` } }],
    },
  ]);
});

test("a model that takes no images gets a note in place of each image, in both formats", () => {
  const anthropic = buildAnthropicRequest(options("anthropic", { images: false }), request);
  const anthropicJson = JSON.stringify(anthropic);
  assert.ok(!anthropicJson.includes(DATA) && !anthropicJson.includes(TOOL_DATA), "no image data sent");
  assert.deepEqual((anthropic.messages[0]!.content as any[])[1], { type: "text", text: "[image shot.png not sent: this model does not take images (providers.<id>.models.<model>.images in the config)]" });
  assert.match((anthropic.messages[2]!.content as any[])[0].content, /attached\.\n\[image not sent: this model does not take images/);

  const openai = buildOpenAIRequest(options("openai", { images: false }), request);
  const openaiJson = JSON.stringify(openai);
  assert.ok(!openaiJson.includes(DATA) && !openaiJson.includes(TOOL_DATA), "no image data sent");
  assert.match(openai.messages[0]!.content as string, /^what is this\?\n\[image shot\.png not sent/);
  assert.match(openai.messages[2]!.content as string, /attached\.\n\[image not sent/);
  assert.equal(openai.messages.length, 3, "no user message for the tool's image");
});

test("an image counts as an image's tokens in the context estimate, not as its base64 text", () => {
  const big = "A".repeat(2_000_000);
  const withImage: Message[] = [{ role: "user", content: [{ type: "text", text: "look" }, { type: "image", media_type: "image/png", data: big }] }];
  const withoutImage: Message[] = [{ role: "user", content: [{ type: "text", text: "look" }] }];
  const added = messageTokens(withImage) - messageTokens(withoutImage);
  assert.ok(added >= 1_500 && added <= 1_700, `one image adds ${added} tokens`);
  const toolImage: Message[] = [{ role: "user", content: [{ type: "tool_result", tool_call_id: "c", content: "x", is_error: false, images: [{ media_type: "image/png", data: big }] }] }];
  assert.ok(messageTokens(toolImage) < 2_000, "a tool's image too");
});
