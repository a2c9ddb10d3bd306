import { test } from "node:test";
import assert from "node:assert/strict";
import { makeSandbox } from "./harness.js";

test("keen without a terminal exits 2 with one line pointing to keen run, and writes no escape codes", async () => {
  const sb = makeSandbox("http://127.0.0.1:9");
  for (const args of [[], ["--continue"], ["--model", "anthropic/claude-test"]]) {
    const r = await sb.run(args);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^keen: the interactive UI needs a terminal \(stdin and stdout are not terminals\); for scripts and pipes use `keen run`/);
    assert.equal(r.stderr.trim().split("\n").length, 1);
    assert.ok(!r.stderr.includes("\x1b"), "no escape codes");
  }
  assert.deepEqual(await sb.sessions(), []);
});
