import assert from "node:assert/strict";
import { utimesSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { GLOB_MAX_RESULTS, createGlobTool } from "../../app/tools/glob.js";
import { call, tempWorkspace } from "./helpers.js";

const t = tempWorkspace();
t.write({
  ".gitignore": "dist/\n*.gen.ts\n",
  "src/old.ts": "",
  "src/new.ts": "",
  "src/mid.ts": "",
  "src/x.gen.ts": "",
  "src/lib/deep.ts": "",
  "dist/out.ts": "",
  "node_modules/pkg/index.ts": "",
  ".github/ci.ts": "",
  "src/.hidden.ts": "",
  "src/tls.key": "",
  "src/.env.local": "",
  "src/readme.md": "",
});
const at = (rel: string, seconds: number) => utimesSync(join(t.ws, rel), seconds, seconds);
at("src/old.ts", 1_000_000);
at("src/mid.ts", 2_000_000);
at("src/new.ts", 3_000_000);
at("src/lib/deep.ts", 2_000_000);
const glob = createGlobTool(t.ctx());

test("matches files, newest first (path breaks ties), skipping gitignored, node_modules, dotfiles and secrets", async () => {
  const r = await glob.run({ pattern: "**/*.ts" }, call());
  assert.equal(r.is_error, false);
  assert.equal(r.content, "src/new.ts\nsrc/lib/deep.ts\nsrc/mid.ts\nsrc/old.ts");
  assert.deepEqual(r.details, { pattern: "**/*.ts", count: 4, truncated: false });
  const everything = await glob.run({ pattern: "**/*" }, call());
  assert.doesNotMatch(everything.content, /tls\.key|\.env|dist|node_modules|gen\.ts/);
  assert.match(everything.content, /src\/readme\.md/);
});

test("a pattern that spells the dot reaches dot directories", async () => {
  assert.equal((await glob.run({ pattern: ".github/*.ts" }, call())).content, ".github/ci.ts");
});

test("path and cwd: results stay relative to cwd", async () => {
  assert.equal((await glob.run({ pattern: "*.ts", path: "src/lib" }, call())).content, "src/lib/deep.ts");
  assert.equal((await createGlobTool(t.ctx("src")).run({ pattern: "lib/*.ts" }, call())).content, "lib/deep.ts");
});

test("no match, bad path, file path", async () => {
  assert.equal((await glob.run({ pattern: "**/*.rs" }, call())).content, "No files matched.");
  assert.match((await glob.run({ pattern: "*", path: "nope" }, call())).content, /^Path not found: nope$/);
  assert.match((await glob.run({ pattern: "*", path: "src/old.ts" }, call())).content, /is not a directory/);
  assert.match((await glob.run({ pattern: "*", path: join(t.home, ".ssh") }, call())).content, /^Refused:/);
});

test(`at most ${GLOB_MAX_RESULTS} results, with a note`, async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < GLOB_MAX_RESULTS + 20; i++) files[`many/f${String(i).padStart(3, "0")}.txt`] = "";
  t.write(files);
  const r = await glob.run({ pattern: "many/*.txt" }, call());
  const lines = r.content.split("\n");
  assert.equal(lines.length, GLOB_MAX_RESULTS + 2);
  assert.equal(lines.at(-1), `[Showing ${GLOB_MAX_RESULTS} of ${GLOB_MAX_RESULTS + 20} files, most recently modified first. Narrow the pattern or path.]`);
  assert.equal(r.details?.truncated, true);
});
