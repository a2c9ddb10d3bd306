import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { createEditFileTool } from "../../app/tools/edit-file.js";
import { createReadFileTool } from "../../app/tools/read-file.js";
import { createWriteFileTool } from "../../app/tools/write-file.js";
import { startFlipper, type PathFlipper } from "../fakes/path-flipper.js";
import { call, tempWorkspace } from "../tools/helpers.js";

// A second process flips workspace paths between real entries and symlinks to a protected
// file and directory (~/.ssh) while the file tools run: no read may return their bytes, no
// write may change or create anything there. Without the checks on the opened descriptor, a few
// hundred iterations are enough for the flipper to win the race (seen with the checks removed).
// 600 keeps a wide margin over that and the unit suite quick (1,500 took 20 s of it).
const ITERATIONS = 600;
const SECRET = "OUTSIDE SECRET\n";

// Registered before tempWorkspace: hooks run in order, and the flippers must stop before the directory goes.
const flippers: PathFlipper[] = [];
after(async () => {
  for (const f of flippers) await f.stop();
});
const t = tempWorkspace();
const keys = join(t.home, ".ssh");
writeFileSync(join(keys, "f.txt"), SECRET);
test("a symlink swap race never lets a file tool read or write outside", async () => {
  const before = { key: statSync(join(keys, "id_rsa")).mtimeMs, f: statSync(join(keys, "f.txt")).mtimeMs, dir: readdirSync(keys) };
  flippers.push(await startFlipper("file", join(t.ws, "target.txt"), join(keys, "id_rsa"), "inside\n"));
  flippers.push(await startFlipper("dir", join(t.ws, "d"), keys, "inside\n"));
  const ctx = t.ctx();
  const read = createReadFileTool(ctx);
  const write = createWriteFileTool(ctx);
  const edit = createEditFileTool(ctx);
  const outcomes = { ok: 0, error: 0 };
  for (let i = 0; i < ITERATIONS; i++) {
    const results = await Promise.all([
      read.run({ path: "target.txt" }, call()),
      read.run({ path: "d/f.txt" }, call()),
      write.run({ path: "target.txt", content: "written by keen\n" }, call()),
      write.run({ path: `d/new-${i}.txt`, content: "written by keen\n" }, call()),
      edit.run({ path: "d/f.txt", old_string: "inside", new_string: "edited" }, call()),
    ]);
    for (const r of results) {
      assert.doesNotMatch(r.content, /OUTSIDE SECRET|PRIVATE KEY/);
      outcomes[r.is_error ? "error" : "ok"]++;
    }
  }
  const flips = await Promise.all(flippers.splice(0).map((f) => f.stop()));
  assert.deepEqual(readdirSync(keys), before.dir, "nothing was created in ~/.ssh");
  assert.equal(readFileSync(join(keys, "id_rsa"), "utf8"), "PRIVATE KEY\n");
  assert.equal(readFileSync(join(keys, "f.txt"), "utf8"), SECRET);
  assert.deepEqual([statSync(join(keys, "id_rsa")).mtimeMs, statSync(join(keys, "f.txt")).mtimeMs], [before.key, before.f]);
  // The race was live: both paths flipped many times, and calls both succeeded and failed.
  assert.ok(flips.every((n) => n > 100), `flips: ${flips}`);
  assert.ok(outcomes.ok > 0 && outcomes.error > 0, JSON.stringify(outcomes));
});
