import assert from "node:assert/strict";
import { linkSync, lstatSync, mkdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { createInodeIndex } from "../../app/permissions/protected-inodes.js";
import { makeTempDir } from "../temp.js";

const base = realpathSync(makeTempDir("keen-inodes-"));
after(() => rmSync(base, { recursive: true, force: true }));
const id = (p: string) => lstatSync(p, { bigint: true });

test("files under a protected source, and secret-named files in a scanned workspace, are found by inode", () => {
  const keys = join(base, "keys");
  const ws = join(base, "ws");
  mkdirSync(join(keys, "deep"), { recursive: true });
  mkdirSync(join(ws, "node_modules", "pkg"), { recursive: true });
  mkdirSync(join(ws, "conf", "prod.env"), { recursive: true });
  writeFileSync(join(keys, "deep", "key"), "k");
  writeFileSync(join(ws, ".env"), "T=1");
  writeFileSync(join(ws, "conf", "prod.env", "db"), "pw");
  writeFileSync(join(ws, "plain.txt"), "p");
  writeFileSync(join(ws, "node_modules", "pkg", ".env"), "not the user's");
  const index = createInodeIndex(() => [{ path: keys }, { path: ws, secretsOnly: true }]);
  assert.deepEqual(index.lookup(id(join(keys, "deep", "key"))), { path: join(keys, "deep", "key") });
  assert.deepEqual(index.lookup(id(join(ws, ".env"))), { path: join(ws, ".env") });
  assert.deepEqual(index.lookup(id(join(ws, "conf", "prod.env", "db"))), { path: join(ws, "conf", "prod.env", "db") });
  assert.equal(index.lookup(id(join(ws, "plain.txt"))), undefined);
  assert.equal(index.lookup(id(join(ws, "node_modules", "pkg", ".env"))), undefined, "package managers' trees are skipped");
});

test("a scan cut short makes every multi-link file on that device unsure (fail closed)", () => {
  const big = join(base, "big");
  mkdirSync(big);
  for (let i = 0; i < 30; i++) writeFileSync(join(big, `f${i}`), "x");
  writeFileSync(join(base, "elsewhere"), "y");
  linkSync(join(base, "elsewhere"), join(base, "elsewhere-2"));
  const index = createInodeIndex(() => [{ path: big }], { maxEntries: 10 });
  assert.deepEqual(index.lookup(id(join(base, "elsewhere"))), { unsure: big });
});

test("a rescan after the ttl sees protected files created later", () => {
  const dir = join(base, "later");
  mkdirSync(dir);
  let clock = 0;
  const index = createInodeIndex(() => [{ path: dir }], { ttlMs: 20, now: () => clock });
  writeFileSync(join(base, "probe"), "");
  assert.equal(index.lookup(id(join(base, "probe"))), undefined);
  writeFileSync(join(dir, "new-key"), "k");
  clock = 19;
  assert.equal(index.lookup(id(join(dir, "new-key"))), undefined, "within the ttl the scan is reused");
  clock = 20;
  assert.deepEqual(index.lookup(id(join(dir, "new-key"))), { path: join(dir, "new-key") });
});
