import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { parseLines } from "./harness.js";
import { removeSandboxes, replaySandbox, sandbox } from "./replay-helpers.js";

const server = useMockLLMServer();
after(() => removeSandboxes());

const MODEL = "anthropic/claude-test";

test("sessions export --cassette: every recorded turn of a session, replayable; an unrecorded session is refused; rm removes it", async () => {
  const sb = sandbox(server.url);
  server.enqueue({ text: "First answer." }, { text: "Second answer." }, { text: "Not recorded." });
  const first = await sb.run(["run", "--format", "json", "--model", MODEL, "--record", join(sb.root, "one.jsonl"), "first"]);
  assert.equal(first.code, 0, first.stderr);
  const id = JSON.parse(first.stdout).session_id;
  // A later recorded run of the same session adds to its cassette (the file given holds only this run).
  assert.equal((await sb.run(["run", "--session", id, "--record", join(sb.root, "two.jsonl"), "second"])).code, 0);
  const other = await sb.run(["run", "--format", "json", "--model", MODEL, "unrecorded"]);
  const otherId = JSON.parse(other.stdout).session_id;

  const out = join(sb.root, "export.jsonl");
  const ex = await sb.run(["sessions", "export", id.slice(0, 13), "--cassette", out]);
  assert.equal(ex.code, 0, ex.stderr);
  const lines = readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines.filter((l) => l.type === "cassette").length, 1, "one header");
  assert.deepEqual(lines.filter((l) => l.type === "request").map((l) => l.n), [1, 2]);
  // The same export to stdout, the refusal and rm through main() in this process (a Keen start less each): the
  // export to a file above and the replay below are the real processes (cassette-secrets.test.ts exports too).
  const stdout = await sb.main(["sessions", "export", id, "--cassette", "-"]);
  assert.equal(stdout.stdout, readFileSync(out, "utf8"));

  // Both turns replay from the export in one keen stdio process.
  const rs = await replaySandbox();
  const commands = ["first", "second"].map((text) => JSON.stringify({ kind: "prompt", text })).join("\n") + "\n";
  const replay = await rs.run(["stdio", "--replay", out, "--replay-speed", "0"], { stdin: commands });
  assert.equal(replay.code, 0, replay.stderr);
  assert.deepEqual(parseLines(replay.stdout).filter((l) => l.kind === "result").map((l) => l.text), ["First answer.", "Second answer."]);

  const refused = await sb.main(["sessions", "export", otherId, "--cassette", join(sb.root, "x.jsonl")]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, new RegExp(`session ${otherId} was not recorded: only runs with --record <file> \\(or KEEN_RECORD\\) keep a cassette`));
  assert.equal(existsSync(join(sb.root, "x.jsonl")), false);

  assert.equal((await sb.main(["sessions", "rm", id])).code, 0);
  assert.equal(existsSync(join(sb.home, "cassettes", `${id}.jsonl`)), false);
});
