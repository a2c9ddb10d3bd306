import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { MAX_IMAGE_EDGE } from "../../app/tools/image.js";
import { makePng, pngSize } from "../fakes/png.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox } from "./harness.js";
import { removeSandboxes, replaySandbox } from "./replay-helpers.js";
import { startStdio, type StdioClient } from "./stdio-client.js";
import { methods } from "@agentclientprotocol/sdk";
import { openAcp } from "./acp-client.js";

/*
 * Images through the real `keen stdio` and the mock model: a prompt's images (a file read through the guard,
 * and base64 data) reach the request in each vendor's shape and stay in the session; read_file on a png reaches
 * the next request as an image; an image over the caps is downscaled; a cassette records and replays them.
 */
const server = useMockLLMServer();
const OPENAI_ENV = { OPENAI_API_KEY: "test-key" };

/**
 * One `keen stdio` for the tests about what the engine makes of images (a prompt's images, read_file on a png,
 * the caps, a model without images): each test starts a new session on its model in it, instead of a Keen of
 * its own (~0.5 s of CPU each). The recording, the replay and ACP keep their own processes. Its workspace
 * holds each test's files under their own names; its config has a model without images.
 */
let shared: { sb: ReturnType<typeof makeSandbox>; client: StdioClient; tests: number } | undefined;
after(async () => {
  if (shared) {
    const { code, stderr } = await shared.client.end();
    assert.equal(code, 0, stderr);
  }
  removeSandboxes();
});
function sharedSession() {
  if (!shared) {
    const sb = makeSandbox(server.url, { providers: { anthropic: { models: { "claude-text": { images: false } } } } });
    // It lives as long as the file runs (minutes on a loaded machine): killed only after 15 of them.
    shared = { sb, client: startStdio(["--permission-mode", "auto"], { ...sb.env, ...OPENAI_ENV }, sb.workspace, 900_000), tests: 0 };
  }
  return shared;
}

/** A new session on `model` in the shared Keen, then `commands` one after another; their responses by the ids given. */
async function inNewSession(model: string, commands: Record<string, unknown>[]) {
  const { client } = sharedSession();
  const tag = `t${++shared!.tests}`;
  const ask = (command: Record<string, unknown>) => {
    client.send({ ...command, id: `${tag}-${command.id}` });
    return client.response(`${tag}-${command.id}`);
  };
  assert.equal((await ask({ kind: "new-session", id: "new" })).ok, true);
  assert.equal((await ask({ kind: "set-model", id: "model", model })).ok, true);
  const responses = new Map<string, Record<string, any>>();
  for (const command of commands) responses.set(command.id as string, await ask(command));
  return { response: (id: string) => responses.get(id)! };
}

function clean() {
  assert.deepEqual(server.unexpected, []);
  assert.deepEqual(server.rejected, []);
  assert.equal(server.pending(), 0);
}

const b64 = (png: Buffer) => png.toString("base64");

test("Anthropic: a stdio prompt's images (a file and base64 data) reach the request as image blocks, are stored, and go again with the next turn", async () => {
  const { sb } = sharedSession();
  const shot = makePng(12, 8);
  const data = makePng(5, 5);
  writeFileSync(join(sb.workspace, "shot.png"), shot);
  server.enqueue({ text: "A gradient." }, { text: "Still a gradient." });
  const run = await inNewSession("anthropic/claude-test", [
    { kind: "prompt", id: "p1", text: "what are these?", images: [{ path: "shot.png" }, { data: b64(data), media_type: "image/png" }] },
    { kind: "prompt", id: "p2", text: "and now?" },
  ]);
  assert.equal(run.response("p1").ok, true, run.response("p1").error);
  assert.equal(run.response("p2").ok, true, run.response("p2").error);
  clean();
  const image = (png: Buffer) => ({ type: "image", source: { type: "base64", media_type: "image/png", data: b64(png) } });
  const [first, second] = server.requests.map((r) => r.body);
  assert.deepEqual(first.messages[0].content.map(({ cache_control: _, ...b }: any) => b), [{ type: "text", text: "what are these?" }, image(shot), image(data)]);
  // The stored user message keeps the images: the next turn's history sends them again.
  assert.deepEqual(second.messages[0].content, [{ type: "text", text: "what are these?" }, image(shot), image(data)]);
  const stored = (await sb.show(run.response("p1").data.session_id)).events.find((e) => e.kind === "user-message");
  assert.deepEqual(stored!.message.content.slice(1), [
    { type: "image", media_type: "image/png", data: b64(shot), name: "shot.png" },
    { type: "image", media_type: "image/png", data: b64(data), name: "image 2" },
  ]);
  // A person reading the session sees where the images were, not their bytes.
  // The command through main() in this process (a Keen start less): what it prints is Keen's own; run-store,
  // headless-replay and terminal-output run it as a real process.
  const shown = await sb.main(["sessions", "show", run.response("p1").data.session_id]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /> what are these\? \[image shot\.png\] \[image image 2\]\n/);
  assert.ok(!shown.stdout.includes(b64(shot)));
});

test("OpenAI: a stdio prompt's image reaches the chat request as an image_url data URL part", async () => {
  const { sb } = sharedSession();
  const shot = makePng(9, 4);
  writeFileSync(join(sb.workspace, "shot-openai.png"), shot);
  server.enqueue({ text: "A gradient." });
  const run = await inNewSession("openai/gpt-4.1", [
    { kind: "prompt", id: "p1", text: "what is this?", images: [{ path: "shot-openai.png" }] },
  ]);
  assert.equal(run.response("p1").ok, true, run.response("p1").error);
  clean();
  const user = server.requests[0]!.body.messages.find((m: any) => m.role === "user");
  assert.deepEqual(user, { role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: `data:image/png;base64,${b64(shot)}` } }] });
});

for (const vendor of ["anthropic", "openai"] as const) {
  test(`${vendor}: read_file on a png reaches the next request as an image`, async () => {
    const { sb } = sharedSession();
    const png = makePng(16, 16);
    const name = `logo-${vendor}.png`;
    writeFileSync(join(sb.workspace, name), png);
    server.enqueue({ toolCalls: [{ id: "call_read", name: "read_file", input: { path: name } }] }, { text: "A small gradient." });
    const model = vendor === "anthropic" ? "anthropic/claude-test" : "openai/gpt-4.1";
    const run = await inNewSession(model, [{ kind: "prompt", id: "p", text: `look at ${name}` }]);
    assert.equal(run.response("p").ok, true, run.response("p").error);
    clean();
    const messages = server.requests[1]!.body.messages;
    const note = `Image ${name} (png, 16x16, ${png.length} bytes), attached.`;
    if (vendor === "anthropic") {
      const { cache_control: _, ...result } = messages.at(-1).content[0];
      assert.deepEqual({ ...result, content: result.content.map(({ cache_control: _, ...b }: any) => b) }, {
        type: "tool_result", tool_use_id: "call_read", is_error: false,
        content: [{ type: "text", text: note }, { type: "image", source: { type: "base64", media_type: "image/png", data: b64(png) } }],
      });
    } else {
      assert.deepEqual(messages.slice(-2), [
        { role: "tool", tool_call_id: "call_read", content: note },
        { role: "user", content: [{ type: "text", text: "The image returned by tool call call_read:" }, { type: "image_url", image_url: { url: `data:image/png;base64,${b64(png)}` } }] },
      ]);
    }
  });
}

test("an image over the caps is downscaled before it is sent; one Keen cannot send refuses the prompt with bad_image", async () => {
  const { sb } = sharedSession();
  writeFileSync(join(sb.workspace, "wide.png"), makePng(MAX_IMAGE_EDGE + 432, 100));
  writeFileSync(join(sb.workspace, "fake.png"), "not an image\n");
  writeFileSync(join(sb.workspace, ".env"), "TOKEN=1\n");
  server.enqueue({ text: "Wide." });
  const run = await inNewSession("anthropic/claude-test", [
    { kind: "prompt", id: "fake", text: "look", images: [{ path: "fake.png" }] },
    { kind: "prompt", id: "missing", text: "look", images: [{ path: "nowhere.png" }] },
    { kind: "prompt", id: "secret", text: "look", images: [{ path: ".env" }] },
    { kind: "prompt", id: "wide", text: "look", images: [{ path: "wide.png" }] },
  ]);
  clean();
  const refusal = (id: string) => [run.response(id).ok, run.response(id).error_code, run.response(id).error];
  assert.deepEqual(refusal("fake"), [false, "bad_image", "fake.png is not an image Keen can send (png, jpeg, gif or webp)"]);
  assert.deepEqual(refusal("missing"), [false, "bad_image", "image not found: nowhere.png"]);
  assert.equal(refusal("secret")[1], "bad_image");
  assert.match(String(refusal("secret")[2]), /\.env/);
  assert.equal(run.response("wide").ok, true);
  assert.equal(server.requests.length, 1, "refused prompts send nothing");
  const sent = server.requests[0]!.body.messages[0].content[1];
  assert.equal(sent.source.media_type, "image/png");
  assert.deepEqual(pngSize(Buffer.from(sent.source.data, "base64")), { width: MAX_IMAGE_EDGE, height: 78 });
});

test("a model configured without images gets a note in place of the image", async () => {
  // The shared Keen's config declares anthropic/claude-text without images.
  const png = makePng(4, 4);
  server.enqueue({ text: "I cannot see it." });
  const run = await inNewSession("anthropic/claude-text", [{ kind: "prompt", id: "p", text: "look", images: [{ data: b64(png), media_type: "image/png" }] }]);
  assert.equal(run.response("p").ok, true, run.response("p").error);
  clean();
  const content = server.requests[0]!.body.messages[0].content;
  assert.ok(!JSON.stringify(content).includes(b64(png)));
  assert.match(content[1].text, /^\[image image 1 not sent: this model does not take images/);
});

test("a cassette records a prompt with an image and replays it; another image does not match", async () => {
  const live = makeSandbox(server.url);
  const png = makePng(6, 6);
  const cassette = join(live.root, "image.jsonl");
  const prompt = (png: Buffer) => `${JSON.stringify({ kind: "prompt", id: "p", text: "what is it?", images: [{ data: b64(png), media_type: "image/png" }] })}\n`;
  server.enqueue({ text: "A tiny gradient." });
  // --sandbox off for these three: their turns only talk (a turn with bash available warms the sandbox up).
  const r = await live.run(["stdio", "--model", "anthropic/claude-test", "--sandbox", "off", "--record", cassette], { stdin: prompt(png) });
  assert.equal(r.code, 0, r.stderr);
  clean();

  const rs = await replaySandbox();
  const p = await rs.run(["stdio", "--replay", cassette, "--replay-speed", "0", "--sandbox", "off"], { stdin: prompt(png) });
  assert.equal(p.code, 0, p.stderr);
  const texts = (out: string) => out.split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.kind === "text" && e.role === "assistant").map((e) => e.content);
  assert.deepEqual(texts(p.stdout), ["A tiny gradient."]);
  assert.deepEqual(texts(p.stdout), texts(r.stdout));

  const other = await rs.run(["stdio", "--replay", cassette, "--replay-speed", "0", "--sandbox", "off"], { stdin: prompt(makePng(6, 7)) });
  assert.match(other.stdout + other.stderr, /images: the cassette's user messages carry 1/);
});

test("ACP: an image content block in session/prompt reaches the request with the prompt's text", async () => {
  // --sandbox off: the turn only talks (a turn with bash available warms the sandbox up).
  const { sb, acp } = openAcp(server.url, ["--model", "anthropic/claude-test", "--sandbox", "off"]);
  const png = makePng(7, 3);
  server.enqueue({ text: "Seen." });
  await acp.run(async (ctx, init) => {
    assert.equal(init.agentCapabilities?.promptCapabilities?.image, true);
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: sb.workspace, mcpServers: [] });
    const reply = await ctx.request(methods.agent.session.prompt, {
      sessionId, prompt: [{ type: "text", text: "what is this?" }, { type: "image", data: b64(png), mimeType: "image/png" }],
    });
    assert.equal(reply.stopReason, "end_turn");
  });
  assert.equal((await acp.exited).code, 0, acp.stderr());
  clean();
  const content = server.requests[0]!.body.messages[0].content.map(({ cache_control: _, ...b }: any) => b);
  assert.deepEqual(content, [{ type: "text", text: "what is this?" }, { type: "image", source: { type: "base64", media_type: "image/png", data: b64(png) } }]);
});
