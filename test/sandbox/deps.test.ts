import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sandboxSupport } from "../../app/sandbox/deps.js";
import { makeTempDir } from "../temp.js";

const skip = sandboxSupport().ok ? false : "no sandbox on this machine";

test("the bwrap probe's verdict is kept on disk for the same bwrap, kernel and user, and probed again when they change", { skip }, () => {
  const file = join(makeTempDir("keen-probe-"), "sandbox-probe.json");
  // A PATH spelled differently each time misses the in-process cache, so each call reaches the disk cache.
  const env = (n: number) => ({ PATH: `${process.env.PATH}${":".repeat(n)}` });
  assert.deepEqual(sandboxSupport(env(1), "linux", file), { ok: true });
  const saved = JSON.parse(readFileSync(file, "utf8"));
  assert.deepEqual(saved.result, { ok: true });
  // A verdict on disk is believed without a bwrap run while its key matches...
  writeFileSync(file, JSON.stringify({ key: saved.key, result: { ok: false, missing: "cached", install: "-" } }));
  assert.deepEqual(sandboxSupport(env(2), "linux", file), { ok: false, missing: "cached", install: "-" });
  // ...and not once the key differs (another bwrap, kernel or user): probed again and rewritten.
  writeFileSync(file, JSON.stringify({ key: "other", result: { ok: false, missing: "stale", install: "-" } }));
  assert.deepEqual(sandboxSupport(env(3), "linux", file), { ok: true });
  assert.equal(JSON.parse(readFileSync(file, "utf8")).key, saved.key);
});
