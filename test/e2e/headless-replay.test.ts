import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { KEEN_BIN, makeSandbox, parseLines } from "./harness.js";
import { assertProtocolStream, assertValidLines, joinDeltas } from "./protocol-check.js";

const MODEL = "anthropic/claude-test";
const PROTOCOL_MD = readFileSync(resolve(import.meta.dirname, "../../docs/PROTOCOL.md"), "utf8");
const COMPLETE_KINDS = ["text", "thinking", "tool-use", "tool-result", "memory", "error"];

const server = useMockLLMServer();

/** One tool call, then an answer with a memory block. */
function scriptToolTurn() {
  server.enqueue(
    { thinking: "List first.", text: "Looking.", toolCalls: [{ id: "toolu_ls", name: "bash", input: { command: "echo a.txt" } }] },
    { text: "There is a.txt.\n<keen_memory>- the workspace holds a.txt</keen_memory>", chunkSize: 6 },
  );
}

const withoutSeq = ({ seq: _seq, ...rest }: Record<string, any>) => rest;

test("sessions show --jsonl replays the complete entries of every turn: same schema, seq from 0, same content", async () => {
  const sb = makeSandbox(server.url);
  scriptToolTurn();
  const first = await sb.run(["run", "--headless", "--stream-deltas", "--model", MODEL, "what is here?"]);
  assert.equal(first.code, 0, first.stderr);
  const live1 = parseLines(first.stdout);
  const id = assertProtocolStream(live1, { deltas: true }).session_id;
  server.enqueue({ text: "Still a.txt." });
  // --sandbox off: this turn only talks (no tool runs), and with bash available it would warm the sandbox.
  const second = await sb.run(["run", "--headless", "--sandbox", "off", "--session", id, "and now?"]);
  assert.equal(second.code, 0, second.stderr);
  const live2 = parseLines(second.stdout);
  assertProtocolStream(live2, { deltas: false });
  assert.equal(live2[0]!.resumed, true);

  const replay = await sb.run(["sessions", "show", id, "--jsonl"]);
  assert.equal(replay.code, 0, replay.stderr);
  const lines = parseLines(replay.stdout);
  assertValidLines(lines);
  assert.deepEqual(lines.map((l) => l.seq), lines.map((_, i) => i));
  const live = [...live1, ...live2].filter((l) => COMPLETE_KINDS.includes(l.kind)).map(withoutSeq);
  assert.deepEqual(lines.map(withoutSeq), live);
  assert.deepEqual(lines.map((l) => l.kind), [
    "text", "thinking", "text", "tool-use", "tool-result", "text", "memory", "text", "text",
  ]);
  assert.equal(lines.find((l) => l.kind === "memory")!.content, "- the workspace holds a.txt");
});

/** Env for a child that is not spawned through the harness (shell pipelines, recipe scripts). */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete out[k]; else out[k] = v;
  return out;
}

/** Runs a command without blocking this process's event loop (the mock server lives here). */
function exec(cmd: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolvePromise, reject) => {
    const child = spawn(cmd, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("close", (status) => {
      clearTimeout(timer);
      resolvePromise({ status, stdout, stderr });
    });
  });
}

const has = (cmd: string) => spawnSync(cmd, ["--version"], { stdio: "ignore" }).status === 0;

test("the jq recipes in docs/PROTOCOL.md work on real output", async (t) => {
  if (!has("jq")) return t.skip("jq is not installed: the PROTOCOL.md recipes were not run");
  const recipes = [...PROTOCOL_MD.matchAll(/^keen run (.+?) \| (jq .+)$/gm)].map((m) => ({ keenArgs: m[1]!, jq: m[2]! }));
  assert.equal(recipes.length, 3, "three jq one-liners: live text, tool calls, final usage");
  const sb = makeSandbox(server.url);
  const outputs: Record<string, string> = {};
  const env = childEnv({ ...sb.env, KEEN_BIN });
  // Recipes whose keen command differs only in its prompt read one stream (the mock model's answer
  // does not depend on the prompt, and each run is a Keen start with a sandboxed tool call).
  const streams = new Map<string, string>();
  for (const recipe of recipes) {
    const flags = recipe.keenArgs.replace(/ "[^"]*"$/, "");
    let stream = streams.get(flags);
    if (!stream) {
      stream = `stream-${streams.size}.jsonl`;
      streams.set(flags, stream);
      server.reset();
      scriptToolTurn();
      // The recipe's keen command, with `keen` being this checkout's launcher.
      const made = await exec("bash", ["-c", `"$KEEN_BIN" run --model ${MODEL} ${recipe.keenArgs} > ${stream}`], { cwd: sb.workspace, env });
      assert.equal(made.status, 0, `${recipe.keenArgs}: ${made.stderr}`);
    }
    const out = await exec("bash", ["-c", `${recipe.jq} < ${stream}`], { cwd: sb.workspace, env });
    assert.equal(out.status, 0, `${recipe.jq}: ${out.stderr}`);
    const lines = parseLines(readFileSync(join(sb.workspace, stream), "utf8"));
    assertProtocolStream(lines, { deltas: recipe.keenArgs.includes("--stream-deltas") });
    const kind = ["text-delta", "tool-use", "result"].find((k) => recipe.jq.includes(`"${k}"`));
    assert.ok(kind, `recipe ${recipe.jq} selects a known kind`);
    outputs[kind] = out.stdout;
    const result = lines.at(-1)!;
    if (kind === "text-delta") assert.equal(out.stdout, joinDeltas(lines, "text-delta"));
    if (kind === "tool-use") {
      assert.deepEqual(parseLines(out.stdout), [{ tool_name: "bash", input: JSON.stringify({ command: "echo a.txt" }) }]);
    }
    if (kind === "result") assert.deepEqual(JSON.parse(out.stdout), result.usage);
  }
  assert.deepEqual(Object.keys(outputs).sort(), ["result", "text-delta", "tool-use"]);
});

/** The fenced block of `lang` that follows `heading` in PROTOCOL.md. */
function recipeBlock(heading: string, lang: string): string {
  const from = PROTOCOL_MD.indexOf(heading);
  assert.ok(from >= 0, `PROTOCOL.md has "${heading}"`);
  const m = PROTOCOL_MD.slice(from).match(new RegExp("```" + lang + "\\n([\\s\\S]*?)```"));
  assert.ok(m, `a ${lang} block after "${heading}"`);
  return m[1]!;
}

const consumers = [
  { name: "Node", heading: "A Node consumer", lang: "js", file: "consumer.mjs", interpreter: process.execPath, keen: 'spawn("keen", [' },
  { name: "Python", heading: "A Python consumer", lang: "python", file: "consumer.py", interpreter: "python3", keen: '["keen", ' },
];
for (const c of consumers) {
  test(`the ${c.name} consumer in docs/PROTOCOL.md renders a real stream`, async (t) => {
    if (c.interpreter === "python3" && !has("python3")) return t.skip("python3 is not installed");
    const code = recipeBlock(c.heading, c.lang);
    assert.ok(code.includes(c.keen), `the ${c.name} recipe spawns keen`);
    const launcher = c.lang === "js"
      ? `spawn(${JSON.stringify(KEEN_BIN)}, [`
      : `[${JSON.stringify(KEEN_BIN)}, `;
    const sb = makeSandbox(server.url, { model: MODEL });
    writeFileSync(join(sb.root, c.file), code.replace(c.keen, launcher));
    scriptToolTurn();
    const out = await exec(c.interpreter, [join(sb.root, c.file)], { cwd: sb.workspace, env: childEnv(sb.env) });
    assert.equal(out.status, 0, out.stderr);
    assert.equal(out.stdout, "Looking.There is a.txt.\n");
    assert.match(out.stderr, /\[bash\] \{"command":"echo a\.txt"\}/);
    assert.match(out.stderr, /\[success\]/);
    assert.equal(server.pending(), 0);
  });
}
