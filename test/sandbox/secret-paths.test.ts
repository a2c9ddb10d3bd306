import assert from "node:assert/strict";
import { chmodSync, mkdirSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { createDirectoryListings, createSecretScanner, isSecretName } from "../../app/sandbox/secret-paths.js";
import { protectedPaths } from "../../app/sandbox/protected-paths.js";
import { secretFileKind } from "../../app/permissions/secret-names.js";
import { makeTempDir } from "../temp.js";

function tree() {
  const root = realpathSync(makeTempDir("keen-secret-paths-"));
  const ws = join(root, "ws");
  mkdirSync(join(ws, "src", "deep", "er"), { recursive: true });
  mkdirSync(join(ws, "node_modules", "pkg", "lib"), { recursive: true });
  writeFileSync(join(ws, "src", "index.ts"), "");
  writeFileSync(join(ws, "node_modules", "pkg", "lib", "a.js"), "");
  return { root, ws };
}

/** A clock 1 h ahead: every listing counts as settled, so a scan keeps the ones whose directory is unchanged. */
const ahead = () => (BigInt(Date.now()) + 3_600_000n) * 1_000_000n;

/**
 * Waits until the file system's clock has moved past `dir`'s ctime, so that a change made next gets a
 * newer one (the settle rule covers this in production; the clock ahead above skips it).
 */
function pastCtimeOf(dir: string, scratch: string) {
  const before = statSync(dir, { bigint: true }).ctimeNs;
  const probe = join(scratch, ".tick");
  do {
    writeFileSync(probe, "");
    unlinkSync(probe);
  } while (statSync(scratch, { bigint: true }).ctimeNs <= before);
}

const sorted = (paths: string[]) => [...paths].sort();

test("the names are the secret-name globs, in any case, and cover the guard's name rules", () => {
  for (const name of [".env", "prod.env", ".env.local", ".envrc", "id_rsa", "id_ed25519.pub", "ssh_host_rsa_key", "tls.pem", "SERVER.KEY", ".netrc", ".ssh", ".aws", "credentials.json"]) {
    assert.ok(isSecretName(name), name);
  }
  for (const name of ["README.md", "index.ts", "keys.txt", "env", "key", "a.keys"]) assert.ok(!isSecretName(name), name);
  for (const name of [".env", ".env.prod", "x.p12", ".pgpass", "id_dsa"]) assert.ok(secretFileKind(name) && isSecretName(name));
});

test("a first scan finds secrets at any depth, in node_modules, and a secret-named directory whole", () => {
  const { ws } = tree();
  writeFileSync(join(ws, ".env"), "A=1");
  writeFileSync(join(ws, "src", "deep", "er", "server.key"), "");
  writeFileSync(join(ws, "node_modules", "pkg", "lib", ".env.test"), "");
  mkdirSync(join(ws, "src", ".ssh"));
  writeFileSync(join(ws, "src", ".ssh", "id_rsa"), "");
  assert.deepEqual(sorted(createSecretScanner(ws).scan()), sorted([
    join(ws, ".env"), join(ws, "src", "deep", "er", "server.key"), join(ws, "node_modules", "pkg", "lib", ".env.test"), join(ws, "src", ".ssh"),
  ]));
});

test("a secret created, deleted or moved after a scan is seen by the next, while unchanged directories are not listed again", () => {
  const { root, ws } = tree();
  const scanner = createSecretScanner(ws, ahead);
  assert.deepEqual(scanner.scan(), []);
  assert.equal(scanner.listed, 7, "every directory listed once");
  assert.deepEqual(scanner.scan(), []);
  assert.equal(scanner.listed, 0, "nothing changed: nothing listed");

  pastCtimeOf(join(ws, "src", "deep", "er"), root);
  writeFileSync(join(ws, "src", "deep", "er", ".env"), "SECRET=1");
  assert.deepEqual(scanner.scan(), [join(ws, "src", "deep", "er", ".env")]);
  assert.equal(scanner.listed, 1, "only the directory that changed");

  pastCtimeOf(join(ws, "src"), root);
  renameSync(join(ws, "src", "deep"), join(ws, "src", "moved"));
  assert.deepEqual(scanner.scan(), [join(ws, "src", "moved", "er", ".env")], "a renamed directory's secrets under the new name");

  pastCtimeOf(join(ws, "src", "moved", "er"), root);
  renameSync(join(ws, "src", "moved", "er", ".env"), join(ws, "src", "moved", "er", "plain.txt"));
  assert.deepEqual(scanner.scan(), []);

  pastCtimeOf(join(ws, "node_modules", "pkg"), root);
  mkdirSync(join(ws, "node_modules", "pkg", "new", "nested"), { recursive: true });
  writeFileSync(join(ws, "node_modules", "pkg", "new", "nested", "id_ed25519"), "");
  assert.deepEqual(scanner.scan(), [join(ws, "node_modules", "pkg", "new", "nested", "id_ed25519")], "a new nested directory is walked");

  pastCtimeOf(join(ws, "node_modules", "pkg", "new", "nested"), root);
  rmSync(join(ws, "node_modules", "pkg", "new", "nested", "id_ed25519"));
  assert.deepEqual(scanner.scan(), []);
});

test("a directory replaced by a file or by another directory of the same name is read again", () => {
  const { root, ws } = tree();
  const scanner = createSecretScanner(ws, ahead);
  scanner.scan();
  pastCtimeOf(join(ws, "src"), root);
  rmSync(join(ws, "src", "deep"), { recursive: true });
  mkdirSync(join(ws, "src", "deep"));
  writeFileSync(join(ws, "src", "deep", "a.pem"), "");
  assert.deepEqual(scanner.scan(), [join(ws, "src", "deep", "a.pem")]);
  pastCtimeOf(join(ws, "src"), root);
  rmSync(join(ws, "src", "deep"), { recursive: true });
  writeFileSync(join(ws, "src", "deep"), "now a file");
  assert.deepEqual(scanner.scan(), []);
});

test("a listing taken within 2 s of its directory's last change is taken again by the next scan", () => {
  const { ws } = tree();
  const scanner = createSecretScanner(ws);
  scanner.scan();
  // Everything was just made: a change in the same clock tick would leave the times as they were.
  scanner.scan();
  assert.equal(scanner.listed, 7);
});

test("symlinked directories are walked where they lead (not back up the tree), and a retargeted link is followed anew", () => {
  const { root, ws } = tree();
  const outside = join(root, "outside");
  const other = join(root, "other");
  mkdirSync(join(outside, "inner"), { recursive: true });
  mkdirSync(other);
  writeFileSync(join(outside, "inner", ".env"), "");
  writeFileSync(join(other, "db.kdbx"), "");
  // ws/linked -> root/hop -> outside: `root` is not walked, so retargeting hop changes no directory the scan lists.
  symlinkSync(outside, join(root, "hop"));
  symlinkSync(join(root, "hop"), join(ws, "linked"));
  symlinkSync(root, join(ws, "up"));
  symlinkSync(join(root, "nowhere"), join(ws, "dangling"));
  symlinkSync(join(outside, "inner", ".env"), join(ws, "src", ".env"));
  const scanner = createSecretScanner(ws, ahead);
  assert.deepEqual(sorted(scanner.scan()), sorted([join(outside, "inner", ".env"), join(ws, "src", ".env")]),
    "found where it really is; a matching link by its own name (the library mounts over its target)");
  assert.equal(scanner.scan().length, 2);
  assert.equal(scanner.listed, 0);
  // Where a link leads can change with no listed directory changing: links are resolved on every scan.
  rmSync(join(root, "hop"));
  symlinkSync(other, join(root, "hop"));
  assert.deepEqual(sorted(scanner.scan()), sorted([join(other, "db.kdbx"), join(ws, "src", ".env")]));
  assert.equal(scanner.listed, 1, "the new target only");
});

test("a directory that cannot be listed is denied whole, and listed again once it can be", { skip: process.getuid?.() === 0 ? "root reads every directory" : false }, () => {
  const { root, ws } = tree();
  const locked = join(ws, "src", "locked");
  mkdirSync(locked);
  writeFileSync(join(locked, ".env"), "");
  chmodSync(locked, 0o000);
  const scanner = createSecretScanner(ws, ahead);
  try {
    assert.deepEqual(scanner.scan(), [locked]);
    pastCtimeOf(locked, root);
  } finally {
    chmodSync(locked, 0o755);
  }
  assert.deepEqual(scanner.scan(), [join(locked, ".env")], "chmod changes the ctime: listed again");
});

test("protectedPaths over the kept listings finds a protected directory created after the first call", async () => {
  const { root, ws } = tree();
  const list = createDirectoryListings(ahead);
  assert.ok(!(await protectedPaths(ws, [], list)).existing.includes(join(ws, "src", ".vscode")));
  pastCtimeOf(join(ws, "src"), root);
  mkdirSync(join(ws, "src", ".vscode"));
  writeFileSync(join(ws, "src", ".vscode", "settings.json"), "{}");
  assert.ok((await protectedPaths(ws, [], list)).existing.includes(join(ws, "src", ".vscode")));
  pastCtimeOf(join(ws, "src", ".vscode"), root);
  rmSync(join(ws, "src", ".vscode"), { recursive: true });
  assert.ok(!(await protectedPaths(ws, [], list)).existing.includes(join(ws, "src", ".vscode")));
});
