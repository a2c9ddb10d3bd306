import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { after, test } from "node:test";
import { DEMO_PROMPT } from "../../app/cli/demo.js";
import { parseLines } from "./harness.js";
import { deadURL, removeSandboxes, replaySandbox } from "./replay-helpers.js";

after(removeSandboxes);

/** A sandbox with no key, every endpoint and proxy at a dead port: the demo must need none of them. */
async function offline() {
  const sb = await replaySandbox();
  const dead = await deadURL();
  Object.assign(sb.env, { HTTPS_PROXY: dead, HTTP_PROXY: dead, KEEN_RECORD: undefined });
  return sb;
}

/** The demo's workspace, named on stderr; removed by the caller. */
function workspaceOf(stderr: string): string {
  const match = /keen: replaying the demo in (\S+)/.exec(stderr);
  assert.ok(match, `stderr names the demo workspace: ${stderr}`);
  return match[1]!;
}

test("keen run --replay demo: reads, edits, runs a command and answers with no key and no network (headless)", async () => {
  const sb = await offline();
  const r = await sb.run(["run", "--replay", "demo", "--headless", "--replay-speed", "0"]);
  const workspace = workspaceOf(r.stderr);
  try {
    assert.equal(r.code, 0, `${r.stderr}\nIf Keen's tools or requests changed on purpose, regenerate the demo: npm run demo:record`);
    const lines = parseLines(r.stdout);
    assert.equal(lines[0]!.permission_mode, "auto", "the demo runs auto in its own workspace");
    assert.equal(lines[0]!.cwd, workspace);
    assert.deepEqual(lines.filter((l) => l.kind === "text" && l.role === "user").map((l) => l.content), [DEMO_PROMPT]);
    assert.deepEqual(lines.filter((l) => l.kind === "tool-use").map((l) => l.tool_name), ["read_file", "edit_file", "bash"]);
    const results = lines.filter((l) => l.kind === "tool-result");
    assert.deepEqual(results.map((l) => l.is_error), [false, false, false], JSON.stringify(results));
    assert.equal(results[2]!.result, "ok: greet works\n");
    assert.ok(lines.some((l) => l.kind === "thinking"), "the demo shows thinking");
    assert.match(lines.find((l) => l.kind === "memory")?.content ?? "", /greet\.js/);
    assert.equal(lines.at(-1)!.status, "success");
    assert.match(readFileSync(resolve(workspace, "greet.js"), "utf8"), /"Hello, "/);
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
});

test("the demo also runs from the bundle without the start-up snapshot, as text", async () => {
  const sb = await offline();
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(sb.env)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  // dist/keen.cjs run as a plain script finds the cassette beside itself, as the snapshot does (bin/keen).
  const r = spawnSync(process.execPath, [resolve(import.meta.dirname, "../../dist/keen.cjs"), "run", "--replay", "demo", "--replay-speed", "0"], {
    cwd: sb.workspace, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 30_000,
  });
  rmSync(workspaceOf(r.stderr), { recursive: true, force: true });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^Fixed\. `greet\(\)` in `greet\.js`.*prints `ok: greet works`\.\n/s);
});

test("keen stdio --replay demo: the same session through the two-way protocol", async () => {
  const sb = await offline();
  const r = await sb.run(["stdio", "--replay", "demo", "--replay-speed", "0"], { stdin: `${JSON.stringify({ kind: "prompt", text: DEMO_PROMPT })}\n` });
  const lines = parseLines(r.stdout);
  const workspace = lines[0]!.cwd;
  rmSync(workspace, { recursive: true, force: true });
  assert.equal(r.code, 0, r.stderr);
  assert.match(workspace, /keen-demo-/);
  assert.equal(lines[0]!.permission_mode, "auto");
  assert.equal(lines.filter((l) => l.kind === "result").at(-1)!.status, "success");
});
