import { test } from "node:test";
import assert from "node:assert/strict";
import { TuiHarness } from "./harness.js";

/* The TUI reads the engine's error_code, not its wording: the setup table follows `no_provider` only. */

const MODELS = { ok: true as const, data: [{ model: "anthropic/claude-test", provider: "anthropic", current: true, available: true }] };

async function started(): Promise<TuiHarness> {
  const h = new TuiHarness(120, 30);
  h.engine.answers["list-models"] = MODELS;
  h.start();
  await h.waitFor("Type a prompt");
  return h;
}

async function quit(h: TuiHarness): Promise<void> {
  await h.keys("\x03");
  await h.keys("\x04");
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the TUI did not exit:\n${h.text()}`)), 20_000).unref());
  await Promise.race([h.result, timeout]);
}

test("a prompt refused with error_code no_provider shows what to set, whatever its text says", async () => {
  const h = await started();
  h.engine.answers.prompt = { ok: false, error: "the engine could not start the turn", error_code: "no_provider" };
  await h.keys("hello\r");
  await h.waitFor("ANTHROPIC_API_KEY");
  assert.match(h.text(), /No model provider is configured \(the engine could not start the turn\)/);
  // Sent once; the refusal is not retried.
  assert.deepEqual(h.engine.commands("prompt").map((c) => c.text), ["hello"]);
  await quit(h);
});

test("a refusal whose text mentions an API key but whose code is not no_provider is an error line, not the setup table", async () => {
  const h = await started();
  h.engine.answers.prompt = { ok: false, error: "provider says: no API key in the proxy", error_code: "failed" };
  await h.keys("hello\r");
  await h.waitFor("no API key in the proxy");
  assert.doesNotMatch(h.text(), /No model provider is configured|To use Keen, set one provider/);
  await quit(h);
});
