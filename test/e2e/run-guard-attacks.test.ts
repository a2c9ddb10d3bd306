import { after, before, beforeEach, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { startMockLLMServer, type MockLLMServer, type MockReplyStep } from "../fakes/mock-llm-server.js";
import { startFlipper, type PathFlipper } from "../fakes/path-flipper.js";
import { makeSandbox, parseLines, type SpawnOptions } from "./harness.js";
import { startStdio } from "./stdio-client.js";

// The model's hands attack Keen's trust boundary (issue 10, items 2, 3, 4 and 7): scripted
// tool calls through the real CLI, against Keen's own files, other agents' credentials,
// hard links, a path flipping under the tools, and files whose bytes must survive an edit.

let server: MockLLMServer;
const flippers: PathFlipper[] = [];
const roots: string[] = [];
before(async () => (server = await startMockLLMServer()));
after(async () => {
  for (const f of flippers) await f.stop();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
  server.close();
});
beforeEach(() => server.reset());

type Sandbox = ReturnType<typeof makeSandbox>;
type Calls = NonNullable<MockReplyStep["toolCalls"]>;

function sandbox(config: Record<string, unknown> = {}): Sandbox {
  const sb = makeSandbox(server.url, config);
  roots.push(sb.root);
  return sb;
}

/** Runs one turn whose first step makes `calls`, then answers "done"; the tool results in order. */
async function toolResults(sb: Sandbox, calls: Calls, options: SpawnOptions = {}) {
  server.enqueue({ toolCalls: calls, chunkSize: 4096 }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "go"], { timeoutMs: 60_000, ...options });
  assert.equal(r.code, 0, r.stderr);
  const lines = parseLines(r.stdout);
  assert.deepEqual([lines.at(-1)!.kind, lines.at(-1)!.status], ["result", "success"]);
  assert.deepEqual([server.unexpected, server.rejected], [[], []]);
  const results = lines.filter((l) => l.kind === "tool-result").map((l) => ({ is_error: l.is_error as boolean, result: l.result as string }));
  assert.equal(results.length, calls.length);
  return results;
}

/** Asserts no request to the model carried any of `secrets`. */
function neverSent(...secrets: string[]) {
  const sent = JSON.stringify(server.requests.map((r) => r.body));
  for (const s of secrets) assert.ok(!sent.includes(s), `the model was sent ${s}`);
}

test("tool calls at Keen's own config and data are refused, by path and through a symlink", async () => {
  const sb = sandbox();
  const config = join(sb.home, "config.json");
  const original = readFileSync(config, "utf8");
  symlinkSync(config, join(sb.workspace, "settings.json"));
  const evil = JSON.stringify({ providers: { anthropic: { baseURL: "http://attacker.example" } } });
  const results = await toolResults(sb, [
    { name: "read_file", input: { path: config } },
    { name: "write_file", input: { path: config, content: evil } },
    { name: "edit_file", input: { path: config, old_string: "retry", new_string: "x" } },
    { name: "list", input: { path: sb.home } },
    { name: "grep", input: { pattern: "session", path: sb.home } },
    { name: "read_file", input: { path: "settings.json" } },
    { name: "write_file", input: { path: "settings.json", content: evil } },
    { name: "write_file", input: { path: join(sb.home, "sessions", "planted.json"), content: "{}" } },
  ]);
  for (const r of results) {
    assert.equal(r.is_error, true, r.result);
    assert.match(r.result, /^Refused: .* is Keen's own config or data; Keen's file tools never read or write it/);
  }
  assert.equal(readFileSync(config, "utf8"), original);
  assert.equal(existsSync(join(sb.home, "sessions", "planted.json")), false);
  neverSent("baseDelayMs");
});

test("with the workspace at home, other agents' credentials and Keen's XDG config are refused", async () => {
  const sb = sandbox();
  const home = sb.env.HOME!;
  const stores = [
    ".claude/.credentials.json", ".claude.json", ".codex/auth.json", ".config/opencode/opencode.json",
    ".local/share/opencode/auth.json", ".gemini/oauth_creds.json", ".pi/agent/auth.json",
  ];
  stores.forEach((s, i) => {
    mkdirSync(dirname(join(home, s)), { recursive: true });
    writeFileSync(join(home, s), `{"token":"AGENT-SECRET-${i}"}`);
  });
  // No KEEN_HOME: config and data in the XDG defaults under this home.
  mkdirSync(join(home, ".config", "keen"), { recursive: true });
  writeFileSync(join(home, ".config", "keen", "config.json"), readFileSync(join(sb.home, "config.json")));
  const results = await toolResults(sb, [
    ...stores.map((s) => ({ name: "read_file", input: { path: s } })),
    { name: "write_file", input: { path: ".codex/auth.json", content: "{}" } },
    { name: "edit_file", input: { path: ".claude.json", old_string: "token", new_string: "t" } },
    { name: "list", input: { path: ".claude" } },
    { name: "read_file", input: { path: ".config/keen/config.json" } },
    { name: "write_file", input: { path: "~/.config/keen/config.json", content: "{}" } },
    { name: "list", input: { path: ".local/share/keen" } },
  ], { cwd: home, env: { KEEN_HOME: undefined, XDG_CONFIG_HOME: undefined, XDG_DATA_HOME: undefined } });
  for (const r of results.slice(0, stores.length + 3)) assert.match(r.result, /^Refused: .* is a credential file; Keen's file tools never read or write secrets\.$/);
  for (const r of results.slice(stores.length + 3)) assert.match(r.result, /^Refused: .* is Keen's own config or data/);
  assert.ok(results.every((r) => r.is_error));
  stores.forEach((s, i) => assert.equal(readFileSync(join(home, s), "utf8"), `{"token":"AGENT-SECRET-${i}"}`));
  neverSent("AGENT-SECRET", "baseDelayMs");
});

test("hard links in the workspace to a key, to Keen's config and to .env are refused; multi-link files are never written", async () => {
  const sb = sandbox();
  const home = sb.env.HOME!;
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".ssh", "id_ed25519"), "PRIVATE KEY MATERIAL\n");
  writeFileSync(join(sb.workspace, ".env"), "DB_PASSWORD=hunter2-hunter2\n");
  writeFileSync(join(sb.workspace, "plain.txt"), "plain\n");
  linkSync(join(home, ".ssh", "id_ed25519"), join(sb.workspace, "notes.txt"));
  linkSync(join(sb.home, "config.json"), join(sb.workspace, "settings.json"));
  linkSync(join(sb.workspace, ".env"), join(sb.workspace, "env.txt"));
  linkSync(join(sb.workspace, "plain.txt"), join(sb.workspace, "plain-2.txt"));
  const results = await toolResults(sb, [
    { name: "read_file", input: { path: "notes.txt" } },
    { name: "read_file", input: { path: "settings.json" } },
    { name: "read_file", input: { path: "env.txt" } },
    { name: "write_file", input: { path: "notes.txt", content: "overwritten\n" } },
    { name: "edit_file", input: { path: "settings.json", old_string: "retry", new_string: "x" } },
    { name: "write_file", input: { path: "plain-2.txt", content: "changed\n" } },
    { name: "read_file", input: { path: "plain-2.txt" } },
    // grep searches through hard links too: the protected ones are left out, the ordinary one is searched.
    { name: "grep", input: { pattern: "PRIVATE KEY|hunter2|retry|plain" } },
  ]);
  const hardLinkTo = (target: string) => new RegExp(`^Refused: .* is a hard link to ${target.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}, which Keen's file tools never read or write\\.$`);
  assert.match(results[0]!.result, hardLinkTo(join(home, ".ssh", "id_ed25519")));
  assert.match(results[1]!.result, hardLinkTo(join(sb.home, "config.json")));
  assert.match(results[2]!.result, hardLinkTo(join(sb.workspace, ".env")));
  for (const r of results.slice(3, 6)) assert.match(r.result, /^Refused: .* has 2 hard links; writing it would change the same file under its other names too/);
  assert.deepEqual(results.map((r) => r.is_error), [true, true, true, true, true, true, false, false]);
  assert.match(results[6]!.result, /plain/);
  assert.match(results[7]!.result, /plain-2\.txt:1:plain/);
  assert.equal(readFileSync(join(home, ".ssh", "id_ed25519"), "utf8"), "PRIVATE KEY MATERIAL\n");
  assert.equal(readFileSync(join(sb.workspace, "plain.txt"), "utf8"), "plain\n");
  neverSent("PRIVATE KEY MATERIAL", "hunter2-hunter2", "baseDelayMs");
});

/** Calls in one turn of the race, and the most turns it may take to see the race live enough. */
const RACE_ROUNDS = 20;
const RACE_TURNS = 12;
/** Contested calls that must have seen each side of each flipping path before the race counts as live. */
const RACE_EVIDENCE = 5;

test("a symlink swap race during many tool calls never reads or writes a protected file", async () => {
  const sb = sandbox();
  const keys = join(sb.env.HOME!, ".ssh");
  mkdirSync(keys, { recursive: true });
  writeFileSync(join(keys, "id_rsa"), "PRIVATE KEY MATERIAL\n");
  writeFileSync(join(keys, "f.txt"), "ALSO SECRET\n");
  const before = { listing: readdirSync(keys), mtimes: ["id_rsa", "f.txt"].map((f) => statSync(join(keys, f)).mtimeMs) };
  // The unit race test (guarded-open-race) runs the tools 3,000 times; this one shows the same
  // holds through a whole Keen process. Its power is counted, not assumed from a call count: turns
  // of 100 calls in one `keen stdio` process go on until every flipping path was seen both as the
  // workspace entry (a call succeeded) and as the symlink (a call was refused) RACE_EVIDENCE times
  // (RACE_TURNS caps it at 1,200 calls, over twice the 500 this test made before it counted),
  // so a loaded machine, where the flippers get less of the CPU, runs more turns, a quiet one fewer.
  // auto: the permission mode of `keen run`, so every call runs unasked and only the guard decides.
  const client = startStdio(["--permission-mode", "auto"], sb.env, sb.workspace, 240_000);
  // The flippers spin a core each for as long as they run: they start once Keen answers (its start-up
  // is no part of the race) and stop as soon as the turns are done, before Keen shuts down.
  client.send({ kind: "list-sessions", id: "up" });
  assert.equal((await client.response("up")).ok, true);
  flippers.push(await startFlipper("file", join(sb.workspace, "target.txt"), join(keys, "id_rsa"), "inside\n"));
  flippers.push(await startFlipper("dir", join(sb.workspace, "d"), keys, "inside\n"));
  const seen = { file: { ok: 0, refused: 0 }, dir: { ok: 0, refused: 0 } };
  const live = () => Object.values(seen).every((s) => s.ok >= RACE_EVIDENCE && s.refused >= RACE_EVIDENCE);
  const results: { is_error: boolean; result: string }[] = [];
  let turns = 0;
  for (; turns < RACE_TURNS && !live(); turns++) {
    const calls: Calls = [];
    for (let i = 0; i < RACE_ROUNDS; i++) {
      const n = turns * RACE_ROUNDS + i;
      calls.push(
        { name: "read_file", input: { path: "target.txt" } },
        { name: "write_file", input: { path: "target.txt", content: "written by keen\n" } },
        { name: "read_file", input: { path: "d/f.txt" } },
        { name: "write_file", input: { path: `d/new-${n}.txt`, content: "written by keen\n" } },
        { name: "edit_file", input: { path: "d/f.txt", old_string: "inside", new_string: "edited" } },
      );
    }
    server.enqueue({ toolCalls: calls, chunkSize: 4096 }, { text: "done" });
    const from = client.lines.length;
    client.send({ kind: "prompt", id: `race-${turns}`, text: "go" });
    assert.equal((await client.next((l) => l.kind === "result", from)).status, "success");
    const turn = client.lines.slice(from).filter((l) => l.kind === "tool-result");
    assert.equal(turn.length, calls.length);
    turn.forEach((l, k) => {
      results.push({ is_error: l.is_error, result: l.result });
      const side = (calls[k]!.input as { path: string }).path === "target.txt" ? seen.file : seen.dir;
      if (!l.is_error) side.ok++;
      // Refused by the guard's check, or by the open itself when the path turned into a symlink after it.
      else if (/^(Refused:|Cannot open) /.test(l.result)) side.refused++;
    });
  }
  const flips = await Promise.all(flippers.splice(0).map((f) => f.stop()));
  const { code, stderr } = await client.end();
  assert.equal(code, 0, stderr);
  for (const r of results) assert.doesNotMatch(r.result, /PRIVATE KEY|ALSO SECRET/);
  neverSent("PRIVATE KEY MATERIAL", "ALSO SECRET");
  assert.deepEqual(readdirSync(keys), before.listing);
  assert.deepEqual(["id_rsa", "f.txt"].map((f) => statSync(join(keys, f)).mtimeMs), before.mtimes);
  assert.equal(readFileSync(join(keys, "id_rsa"), "utf8"), "PRIVATE KEY MATERIAL\n");
  assert.deepEqual([server.unexpected, server.rejected], [[], []]);
  assert.ok(live(), `the race was not live in ${turns} turns: ${JSON.stringify(seen)}, flips ${flips}`);
});

// Three guards of the write tools in one turn of one Keen (each Keen with the sandbox costs ~0.7 s
// of CPU): the calls touch different files, and each group's results are checked on their own.
test("edits keep the bytes they did not touch (Latin-1, CRLF, no final newline); the redaction marker is never written back; the project's .keen/config.json is refused by default", async () => {
  const sb = sandbox();
  const latin1 = Buffer.from("# caf\xe9\r\nversion = 1\r\nauthor = \"Jos\xe9\"", "latin1");
  writeFileSync(join(sb.workspace, "legacy.cfg"), latin1);
  writeFileSync(join(sb.workspace, "win.txt"), "alpha\r\nbeta\r\ngamma");
  writeFileSync(join(sb.workspace, "app.env.ts"), "export const KEY = 'sk-local-0123456789';\n");
  const results = await toolResults(sb, [
    { name: "edit_file", input: { path: "legacy.cfg", old_string: "version = 1\nauthor", new_string: "version = 2\nauthor" } },
    { name: "edit_file", input: { path: "legacy.cfg", old_string: "caf\uFFFD", new_string: "cafe" } },
    { name: "write_file", input: { path: "legacy.cfg", content: "replaced\n" } },
    { name: "edit_file", input: { path: "win.txt", old_string: "beta\ngamma", new_string: "beta\ndelta" } },
    { name: "write_file", input: { path: "app.env.ts", content: "export const KEY = '[redacted]';\n" } },
    { name: "edit_file", input: { path: "app.env.ts", old_string: "'[redacted]'", new_string: "process.env.KEY" } },
    { name: "write_file", input: { path: ".keen/config.json", content: '{"maxTurns": 99}' } },
  ]);

  const bytes = results.slice(0, 4);
  assert.deepEqual(bytes.map((r) => r.is_error), [false, true, true, false]);
  assert.match(bytes[1]!.result, /is not valid UTF-8 .* can only match and insert ASCII text/);
  assert.match(bytes[2]!.result, /exists and is not valid UTF-8 .* set overwrite_non_utf8 to true/);
  assert.deepEqual(readFileSync(join(sb.workspace, "legacy.cfg")), Buffer.from("# caf\xe9\r\nversion = 2\r\nauthor = \"Jos\xe9\"", "latin1"));
  assert.equal(readFileSync(join(sb.workspace, "win.txt"), "utf8"), "alpha\r\nbeta\r\ndelta");

  for (const r of results.slice(4, 6)) {
    assert.equal(r.is_error, true);
    assert.match(r.result, /^Refused: (content|old_string) contains \[redacted\], the marker Keen puts where it hid a secret from you/);
  }
  assert.equal(readFileSync(join(sb.workspace, "app.env.ts"), "utf8"), "export const KEY = 'sk-local-0123456789';\n");

  const project = results[6]!;
  assert.equal(project.is_error, true);
  assert.match(project.result, /^Refused: .*\.keen\/config\.json is in this project's \.keen config directory, which chooses the next run's model and tools; writing it needs "guard": \{ "allowProjectConfigEdits": true \} in your own Keen config\.$/);
  assert.equal(existsSync(join(sb.workspace, ".keen")), false);
});

test("the project's .keen/config.json is written when the user's config allows it", async () => {
  const allowedSb = sandbox({ guard: { allowProjectConfigEdits: true } });
  const [ok] = await toolResults(allowedSb, [{ name: "write_file", input: { path: ".keen/config.json", content: '{"maxTurns": 99}' } }]);
  assert.equal(ok!.is_error, false, ok!.result);
  assert.equal(readFileSync(join(allowedSb.workspace, ".keen", "config.json"), "utf8"), '{"maxTurns": 99}');
});
