import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chooseAgentModel } from "../../app/cli/agent-models.js";
import type { ResolvedConfig } from "../../app/cli/config.js";
import { chooseModel } from "../../app/cli/provider-setup.js";
import { BUILTIN_PROVIDERS } from "../../app/providers/registry.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";

/*
 * A custom agent's `model` (docs/extensions.md, "Custom agents"): `keen run` in this process
 * (test/cli/in-process.ts) against the mock server. The children answer with text only, so
 * nothing is spawned. The parent runs on anthropic/claude-test, priced by the config.
 */

const server = useMockLLMServer();
const MODEL = "anthropic/claude-test";
// Parent: $10 / $100 per million tokens; Claude Haiku (built in): $1 / $5.
const CONFIG = { providers: { anthropic: { models: { "claude-test": { price: { input: 10, output: 100 } } } } } };

function sandbox(agentModel: string) {
  const sb = makeInProcessSandbox(server, CONFIG);
  mkdirSync(join(sb.workspace, ".claude", "agents"), { recursive: true });
  writeFileSync(join(sb.workspace, ".claude", "agents", "quick.md"), `---\nname: quick\ndescription: Quick lookups\nmodel: ${agentModel}\n---\nYou answer quickly.\n`);
  return sb;
}

/** A parent that delegates to the `quick` agent and then answers; the child's reply (when it runs) in between. */
function script(child: boolean) {
  server.enqueue(
    { match: "PARENT-Q", usage: { input: 100, output: 10 }, toolCalls: [{ id: "toolu_t", name: "task", input: { description: "Look it up", prompt: "CHILD-Q: look it up", agent: "quick" } }] },
    ...(child ? [{ match: "CHILD-Q", usage: { input: 1000, output: 100 }, text: "found it" }] : []),
    { match: "PARENT-Q", usage: { input: 200, output: 20 }, text: "Done." },
  );
}

async function run(sb: ReturnType<typeof sandbox>, env: Record<string, string | undefined> = {}) {
  const r = await sb.keen(["run", "--headless", "--no-stdin", "--sandbox", "off", "--model", MODEL, "PARENT-Q: delegate"], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(server.unexpected, []);
  assert.equal(server.pending(), 0);
  const lines: Record<string, any>[] = r.stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line));
  const task = lines.find((l) => l.kind === "tool-result" && l.tool_call_id === "toolu_t")!;
  const title = lines.find((l) => l.kind === "tool-use" && l.tool_call_id === "toolu_t")!.title as string;
  return { task, title, result: lines.at(-1)!, lines };
}

// A child's conversation starts with its own prompt; the parent's with the user's (OpenAI's system message comes first).
const sent = () => server.requests.map((q) => [q.vendor, q.body.model, JSON.stringify(q.body.messages.find((m: { role: string }) => m.role === "user")).includes("CHILD-Q") ? "child" : "parent"]);

test("an agent naming `haiku`: the child's requests go to Claude Haiku, the parent's to the session's model; each priced at its own", async () => {
  const sb = sandbox("haiku");
  script(true);
  const { task, title, result } = await run(sb);
  assert.deepEqual(sent(), [["anthropic", "claude-test", "parent"], ["anthropic", "claude-haiku-5-5", "child"], ["anthropic", "claude-test", "parent"]]);
  // Known when the call is announced: the title names the model the child will run on.
  assert.equal(title, "Task (quick · anthropic/claude-haiku-5-5): Look it up");
  assert.deepEqual([task.is_error, task.result, task.details.model, task.details.agent], [false, "found it", "anthropic/claude-haiku-5-5", "quick"]);
  assert.deepEqual([result.usage.input_tokens, result.usage.output_tokens], [1300, 130]);
  // Parent: 300 in at $10, 30 out at $100 = $0.006; child: 1000 in at $1, 100 out at $5 = $0.0015.
  assert.equal(result.cost_usd, 0.0075);
});

test("an agent naming another configured provider's model: the child talks to that provider", async () => {
  for (const name of ["openai/gpt-5.4-mini", "gpt-5.4-mini"]) {
    server.reset();
    const sb = sandbox(name);
    script(true);
    const { task, title, result } = await run(sb, { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.openaiBaseURL });
    assert.deepEqual(sent(), [["anthropic", "claude-test", "parent"], ["openai", "gpt-5.4-mini", "child"], ["anthropic", "claude-test", "parent"]], name);
    assert.equal(task.details.model, "openai/gpt-5.4-mini");
    assert.equal(title, "Task (quick · openai/gpt-5.4-mini): Look it up");
    // gpt-5.4-mini: $0.75 in, $4.5 out: 1000 in and 100 out = $0.0012, with the parent's $0.006.
    assert.equal(result.cost_usd, 0.0072);
  }
});

test("`model: inherit`: the child runs on the session's model, the whole turn at its price", async () => {
  const sb = sandbox("inherit");
  script(true);
  const { task, title, result } = await run(sb);
  assert.deepEqual(sent().map((s) => s[1]), ["claude-test", "claude-test", "claude-test"]);
  assert.equal(task.details.model, MODEL);
  assert.equal(title, "Task (quick): Look it up", "the session's model, shown in the status bar, is not repeated");
  assert.equal(result.cost_usd, 0.026);
});

test("a child on a model without a price leaves the turn without a cost estimate rather than a wrong one", async () => {
  const sb = sandbox("anthropic/claude-unpriced");
  script(true);
  const { task, result } = await run(sb);
  assert.deepEqual(sent().map((s) => s[1]), ["claude-test", "claude-unpriced", "claude-test"]);
  assert.equal(task.details.model, "anthropic/claude-unpriced");
  assert.equal(result.usage.input_tokens, 1300);
  assert.equal("cost_usd" in result, false);
});

test("a model Keen cannot use fails the task call, naming the model and the agent's file; no child request is sent", async () => {
  const cases: [string, Record<string, string | undefined>, RegExp][] = [
    ["gpt-99", {}, /unknown model "gpt-99": no configured provider lists it; name it as <provider>\/<model> \(e\.g\. anthropic\/gpt-99\)/],
    ["gpt-5.4-mini", {}, /provider "openai" needs an API key: set OPENAI_API_KEY/],
    ["nobody/model-x", {}, /unknown model "nobody\/model-x"/],
  ];
  for (const [name, env, reason] of cases) {
    server.reset();
    const sb = sandbox(name);
    script(false);
    const { task, title, result } = await run(sb, env);
    assert.deepEqual(sent(), [["anthropic", "claude-test", "parent"], ["anthropic", "claude-test", "parent"]], name);
    assert.equal(title, `Task (quick · ${name}): Look it up`, "a model that cannot be used is shown as the agent names it");
    assert.equal(task.is_error, true);
    const file = join(".claude", "agents", "quick.md");
    assert.ok(task.result.startsWith(`The agent "quick" (${file}) names the model "${name}", which cannot be used: `), task.result);
    assert.match(task.result, reason);
    assert.equal(result.status, "success", "the parent turn goes on: the model reads the failure");
  }
});

test("resolving an agent's model: a listed id, then Claude Code's aliases, then <provider>/<model>; the session's provider first", () => {
  const config = {
    providers: { ...BUILTIN_PROVIDERS, local: { kind: "openai", baseURL: "http://127.0.0.1:1/v1", keyOptional: true, defaultModel: "qwen3", models: { "claude-haiku-local": {} } } },
  } as unknown as ResolvedConfig;
  const env = { ANTHROPIC_API_KEY: "a", OPENROUTER_API_KEY: "r" };
  const on = (ref: string) => chooseModel(ref, config, env);
  const pick = (name: string, session = on("anthropic/claude-test"), keys: Record<string, string> = env) => {
    const choice = chooseAgentModel(name, { session, config, env: keys });
    return `${choice.providerId}/${choice.model}`;
  };
  // Aliases: the tier's first model in the catalogue (the newest), on the session's provider when it lists one.
  assert.deepEqual(["sonnet", "Opus", "haiku"].map((n) => pick(n)), ["anthropic/claude-sonnet-5-5", "anthropic/claude-opus-5-5", "anthropic/claude-haiku-5-5"]);
  assert.equal(pick("sonnet", on("openrouter")), "openrouter/anthropic/claude-sonnet-4.5");
  assert.equal(pick("haiku", on("local")), "local/claude-haiku-local");
  // A listed id goes to the provider that lists it; one the session's provider lists stays there.
  assert.equal(pick("claude-haiku-4-5", on("local")), "anthropic/claude-haiku-4-5");
  assert.equal(pick("qwen3"), "local/qwen3");
  assert.equal(pick("anthropic/claude-sonnet-4.5", on("openrouter")), "openrouter/anthropic/claude-sonnet-4.5");
  // Any model of a known provider, as --model takes it.
  assert.equal(pick("anthropic/claude-next"), "anthropic/claude-next");
  // A provider without its key: listed elsewhere with a key wins; else the missing key is the error.
  assert.throws(() => pick("o3"), /provider "openai" needs an API key: set OPENAI_API_KEY/);
  assert.throws(() => pick("sonnet", on("local"), {}), /provider "anthropic" needs an API key: set ANTHROPIC_API_KEY/);
  assert.throws(() => pick("claude-sonnet"), /unknown model "claude-sonnet": no configured provider lists it/);
});

test("a run whose subagent talks to another provider is recorded whole and replays without keys", async () => {
  const sb = sandbox("openai/gpt-5.4-mini");
  const cassette = join(sb.root, "c.jsonl");
  script(true);
  const args = ["run", "--headless", "--no-stdin", "--sandbox", "off"];
  const recorded = await sb.keen([...args, "--model", MODEL, "--record", cassette, "PARENT-Q: delegate"], { env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.openaiBaseURL } });
  assert.equal(recorded.code, 0, recorded.stderr);
  assert.deepEqual(sent().map((s) => s[0]), ["anthropic", "openai", "anthropic"]);
  const replayed = await sb.keen([...args, "--replay", cassette, "--replay-speed", "0", "PARENT-Q: delegate"], {
    env: { ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: "http://127.0.0.1:9", OPENAI_API_KEY: undefined, OPENAI_BASE_URL: "http://127.0.0.1:9/v1" },
  });
  assert.equal(replayed.code, 0, replayed.stderr);
  assert.equal(server.requests.length, 3, "the replay asked the network nothing");
  const task = (stdout: string) => stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l)).find((l) => l.kind === "tool-result" && l.tool_call_id === "toolu_t");
  assert.deepEqual([task(replayed.stdout).result, task(replayed.stdout).details.model], ["found it", "openai/gpt-5.4-mini"]);
});
