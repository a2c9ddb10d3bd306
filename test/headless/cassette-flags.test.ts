import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../storage/level-store.js";
import { makeTempDir } from "../temp.js";
import { inProcess } from "../cli/in-process.js";

// keen run's --record/--replay flag errors, through the same main() the bundle runs, in this
// process (a spawned Keen per case cost ~0.4 s of CPU). test/e2e/record-replay.test.ts keeps a
// spawned refusal of a cassette (exit 2, stderr) and KEEN_RECORD.

/** A KEEN_HOME and a workspace; no provider traffic can happen (the base URL goes nowhere). */
function sandbox() {
  const root = realpathSync(makeTempDir("keen-cassette-flags-"));
  const home = join(root, "keen-home");
  const workspace = join(root, "ws");
  mkdirSync(home, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(home, "config.json"), JSON.stringify({ stdinGraceMs: 300 }));
  const env: Record<string, string | undefined> = {
    KEEN_HOME: home, HOME: join(root, "user-home"), KEEN_RECORD: undefined,
    ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: "http://127.0.0.1:9", OPENAI_API_KEY: undefined,
  };
  return { home, workspace, env };
}

/** main(args) with the sandbox's env and the workspace as cwd, in this process (test/cli/in-process.ts). */
function keen(sb: ReturnType<typeof sandbox>, args: string[]) {
  return inProcess(args, sb.env, sb.workspace);
}

const cases: [string[], RegExp][] = [
  [["--record", "a.jsonl", "--replay", "b.jsonl"], /--record and --replay cannot be combined/],
  [["--replay-loose"], /--replay-loose needs --replay <file>/],
  [["--replay", "x.jsonl", "--replay-speed", "-1"], /--replay-speed must be 0 \(at once\), 1 \(as recorded\) or a factor N > 0, not "-1"/],
  [["--replay", "missing.jsonl"], /no cassette at .*missing\.jsonl/],
];

for (const [flags, message] of cases) {
  test(`keen run ${flags.join(" ")}: a usage error (exit 2), one line, nothing stored`, async () => {
    const sb = sandbox();
    const r = await keen(sb, ["run", "--no-stdin", ...flags, "hi"]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^keen: [^\n]+\n$/, "one line on stderr");
    assert.match(r.stderr, message);
    assert.deepEqual(await openStore(sb.home).list(), []);
  });
}
