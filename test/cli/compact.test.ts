import { test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../storage/level-store.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";

// `keen sessions compact` on an idle session, decided in this process (test/cli/in-process.ts): a
// failed summary, one with instructions, what the next turn sends, and the transcript that keeps the
// whole history. test/e2e/compaction.test.ts keeps the real process: a busy session refused (another
// process holds it), exit 1, and a compaction's exit 0.

const server = useMockLLMServer();
const MODEL = ["--model", "anthropic/claude-test"];
const CONFIG = {
  providers: { anthropic: { models: { "claude-test": { contextWindow: 200_000, maxOutputTokens: 100 } } } },
  compaction: { keepTokens: 10 },
};
const long = (tag: string) => `${tag} ${"lorem ipsum dolor ".repeat(60)}`;
function textOf(message: any): string {
  if (typeof message.content === "string") return message.content;
  return (message.content ?? []).map((b: any) => (b.type === "text" ? b.text : "")).join("");
}

test("sessions compact: a failed summary changes nothing (exit 1); one with instructions is what the next turn sends; show keeps the history", async () => {
  const sb = makeInProcessSandbox(server, CONFIG);
  server.enqueue({ text: "one <keen_memory>kept-fact</keen_memory>" }, { text: "two" });
  const id = (await sb.runJson([...MODEL, long("prompt-1")])).session_id;
  await sb.runJson([...MODEL, "--session", id, long("prompt-2")]);
  const replaced = async () => (await openStore(sb.home).load(id)).some((e) => e.kind === "context-replacement");

  server.enqueue({ kind: "http-error", status: 400 });
  const failed = await sb.keen(["sessions", "compact", id]);
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /compaction failed/);
  assert.equal(await replaced(), false, "a failed compaction replaces nothing");

  server.enqueue({ text: "MANUAL SUMMARY" });
  const ok = await sb.keen(["sessions", "compact", id, "--instructions", "keep the lorem"]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stderr, /compacted session/);
  assert.match(JSON.stringify(server.requests.at(-1)!.body), /keep the lorem/);
  assert.equal(await replaced(), true);
  server.enqueue({ text: "after" });
  await sb.runJson([...MODEL, "--session", id, "next"]);
  const sent = server.requests.at(-1)!.body.messages;
  assert.match(textOf(sent[0]), /MANUAL SUMMARY[\s\S]*<keen_memory>kept-fact<\/keen_memory>/);
  assert.doesNotMatch(JSON.stringify(sent), /prompt-1 /);

  const shown = await sb.keen(["sessions", "show", id]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /compacted \(manual\)/);
  assert.match(shown.stdout, /prompt-1 /, "sessions show keeps the whole history");
  assert.deepEqual(server.unexpected, []);
});
