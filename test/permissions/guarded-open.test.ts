import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, afterEach, describe, test } from "node:test";
import { createFileGuard } from "../../app/permissions/file-guard.js";
import type { FileGuard } from "../../app/permissions/guard.js";
import { openGuarded, openGuardedDir, readAll, replaceContent, useProcFd, type OpenFailure } from "../../app/permissions/guarded-open.js";

const base = realpathSync(mkdtempSync(join(tmpdir(), "keen-open-")));
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;

/** A fresh workspace, fake home (with a key) and an outside directory holding a secret. */
function setup() {
  const root = join(base, `case-${n++}`);
  const ws = join(root, "ws");
  const home = join(root, "home");
  const outside = join(root, "outside");
  for (const d of [ws, join(ws, ".git"), join(home, ".ssh"), outside]) mkdirSync(d, { recursive: true });
  writeFileSync(join(home, ".ssh", "id_rsa"), "PRIVATE KEY\n");
  writeFileSync(join(outside, "secret.txt"), "OUTSIDE SECRET\n");
  const real = createFileGuard({ workspace: ws, home });
  return { ws, home, outside, real };
}

/** The real guard, with `hook(k)` run right after its k-th check returns: a swap injected at an exact moment. */
function hooked(real: FileGuard, hook: (k: number) => void): FileGuard {
  let k = 0;
  const wrap = (fn: (p: string) => ReturnType<FileGuard["checkRead"]>) => (p: string) => {
    const decision = fn(p);
    hook(++k);
    return decision;
  };
  return { ...real, checkRead: wrap(real.checkRead), checkWrite: wrap(real.checkWrite) };
}

function refused(outcome: ReturnType<typeof openGuarded>, pattern = /changed while it was being opened/): OpenFailure {
  assert.equal(outcome.ok, false, "expected a refusal");
  if (outcome.ok) throw new Error("unreachable");
  assert.equal(outcome.kind, "refused", outcome.reason);
  assert.match(outcome.reason, pattern);
  return outcome;
}

/** Replaces `path` (file or directory) with a symlink to `target`, as a racing process would. */
function swapForSymlink(path: string, target: string, keepAs?: string) {
  if (keepAs) renameSync(path, keepAs);
  else rmSync(path, { recursive: true, force: true });
  symlinkSync(target, path);
}

for (const proc of [true, false]) {
  describe(proc ? "Linux: the descriptor's /proc path is checked" : "portable: device and inode are compared", () => {
    if (!proc && process.platform !== "linux") return;
    useProcFd(proc);
    afterEach(() => useProcFd(true));
    const mode = () => useProcFd(proc);

    test("a file swapped for a symlink after the check is not read", () => {
      mode();
      const { ws, outside, real } = setup();
      writeFileSync(join(ws, "t.txt"), "inside\n");
      const guard = hooked(real, (k) => k === 1 && swapForSymlink(join(ws, "t.txt"), join(outside, "secret.txt")));
      refused(openGuarded(guard, join(ws, "t.txt"), "read"));
    });

    test("a directory two levels up swapped for a symlink after the check is not read", () => {
      mode();
      const { ws, outside, real } = setup();
      mkdirSync(join(ws, "a", "b"), { recursive: true });
      writeFileSync(join(ws, "a", "b", "f.txt"), "inside\n");
      mkdirSync(join(outside, "a", "b"), { recursive: true });
      writeFileSync(join(outside, "a", "b", "f.txt"), "OUTSIDE SECRET\n");
      const guard = hooked(real, (k) => k === 1 && swapForSymlink(join(ws, "a"), join(outside, "a"), join(ws, "a-moved")));
      refused(openGuarded(guard, join(ws, "a", "b", "f.txt"), "read"));
    });

    test("a write to a file swapped for a symlink after the check changes nothing outside", () => {
      mode();
      const { ws, outside, real } = setup();
      writeFileSync(join(ws, "t.txt"), "inside\n");
      const guard = hooked(real, (k) => k === 1 && swapForSymlink(join(ws, "t.txt"), join(outside, "secret.txt")));
      refused(openGuarded(guard, join(ws, "t.txt"), "write", { create: true }));
      assert.equal(readFileSync(join(outside, "secret.txt"), "utf8"), "OUTSIDE SECRET\n");
    });

    test("a new file's directory swapped after it was verified: the file is removed, nothing lands outside", () => {
      mode();
      const { ws, outside, real } = setup();
      mkdirSync(join(ws, "d"));
      // Check 2 is the verification of the opened directory: swap right after it.
      const guard = hooked(real, (k) => k === 2 && swapForSymlink(join(ws, "d"), outside, join(ws, "d-moved")));
      refused(openGuarded(guard, join(ws, "d", "new.txt"), "write", { create: true }));
      assert.deepEqual(readdirSync(outside), ["secret.txt"]);
      assert.deepEqual(readdirSync(join(ws, "d-moved")), [], "the file created in the moved directory was removed");
    });

    test("a missing directory made into a symlink after the check: nothing is created outside", () => {
      mode();
      const { ws, outside, real } = setup();
      const guard = hooked(real, (k) => k === 1 && symlinkSync(outside, join(ws, "new-dir")));
      const outcome = openGuarded(guard, join(ws, "new-dir", "x", "f.txt"), "write", { create: true });
      assert.equal(outcome.ok, false);
      assert.deepEqual(readdirSync(outside), ["secret.txt"]);
    });

    test("a file created and then refused by the second check is removed", () => {
      mode();
      const { ws, real } = setup();
      let calls = 0;
      const guard: FileGuard = {
        ...real,
        checkWrite: (p) => (++calls >= 3 ? { ok: false, reason: "Refused: second look" } : real.checkWrite(p)),
      };
      refused(openGuarded(guard, join(ws, "made.txt"), "write", { create: true }), /second look/);
      assert.equal(existsSync(join(ws, "made.txt")), false);
    });

    test("a directory swapped after the check is not listed", () => {
      mode();
      const { ws, outside, real } = setup();
      mkdirSync(join(ws, "d"));
      const guard = hooked(real, (k) => k === 1 && swapForSymlink(join(ws, "d"), outside));
      const outcome = openGuardedDir(guard, join(ws, "d"));
      assert.equal(outcome.ok, false);
    });
  });
}

describe("opening", () => {
  test("reads and writes through the descriptor; missing parents are created one by one", () => {
    const { ws, real } = setup();
    const file = openGuarded(real, join(ws, "a", "b", "c.txt"), "write", { create: true });
    assert.ok(file.ok);
    assert.equal(file.created, true);
    replaceContent(file.fd, Buffer.from("hello\n"));
    closeSync(file.fd);
    assert.equal(readFileSync(join(ws, "a", "b", "c.txt"), "utf8"), "hello\n");
    const again = openGuarded(real, join(ws, "a", "b", "c.txt"), "read");
    assert.ok(again.ok);
    assert.equal(readAll(again.fd).toString(), "hello\n");
    closeSync(again.fd);
  });

  test("a shorter content truncates; preview never creates anything", () => {
    const { ws, real } = setup();
    writeFileSync(join(ws, "long.txt"), "a long line\n");
    const file = openGuarded(real, join(ws, "long.txt"), "write");
    assert.ok(file.ok);
    replaceContent(file.fd, Buffer.from("short\n"));
    closeSync(file.fd);
    assert.equal(readFileSync(join(ws, "long.txt"), "utf8"), "short\n");
    const preview = openGuarded(real, join(ws, "p", "q.txt"), "preview", { create: true });
    assert.equal(preview.ok ? "opened" : preview.kind, "missing");
    assert.equal(existsSync(join(ws, "p")), false);
  });

  test("a refused path creates no directory on the way", () => {
    const { ws, real } = setup();
    for (const p of [join(ws, ".git", "hooks", "x", "pre-commit"), join(ws, "secrets.env", "sub", "db.txt"), join(ws, ".keen", "config.json")]) {
      const outcome = openGuarded(real, p, "write", { create: true });
      assert.equal(outcome.ok ? "opened" : outcome.kind, "refused", p);
    }
    assert.equal(existsSync(join(ws, ".git", "hooks")), false);
    assert.equal(existsSync(join(ws, "secrets.env")), false);
    assert.equal(existsSync(join(ws, ".keen")), false);
  });

  test("directories, FIFOs and missing files are told apart, and a FIFO does not block", () => {
    const { ws, real } = setup();
    mkdirSync(join(ws, "dir"));
    execFileSync("mkfifo", [join(ws, "pipe")]);
    const kind = (p: string, m: "read" | "write") => {
      const o = openGuarded(real, join(ws, p), m);
      if (o.ok) closeSync(o.fd);
      return o.ok ? "opened" : o.kind;
    };
    assert.deepEqual([kind("dir", "read"), kind("dir", "write"), kind("pipe", "read"), kind("pipe", "write"), kind("nope", "read")],
      ["directory", "directory", "not-file", "not-file", "missing"]);
  });
});

describe("hard links", () => {
  test("a file with more than one link is never written", () => {
    const { ws, real } = setup();
    writeFileSync(join(ws, "one.txt"), "shared\n");
    linkSync(join(ws, "one.txt"), join(ws, "two.txt"));
    refused(openGuarded(real, join(ws, "two.txt"), "write"), /has 2 hard links; writing it would change the same file under its other names/);
    refused(openGuarded(real, join(ws, "two.txt"), "preview"), /has 2 hard links/);
    assert.equal(readFileSync(join(ws, "one.txt"), "utf8"), "shared\n");
    const read = openGuarded(real, join(ws, "two.txt"), "read");
    assert.ok(read.ok, "an ordinary multi-link file may be read");
    closeSync(read.fd);
  });

  test("a hard link in the workspace to a credential, Keen's config or a secret-named file is not read", () => {
    const { ws, home, real: _ } = setup();
    const keenHome = join(dirname(ws), "keen-home");
    mkdirSync(keenHome);
    writeFileSync(join(keenHome, "config.json"), '{"model":"x"}');
    writeFileSync(join(ws, ".env"), "TOKEN=abc\n");
    mkdirSync(join(home, ".codex"));
    writeFileSync(join(home, ".codex", "auth.json"), '{"key":"k"}');
    const guard = createFileGuard({ workspace: ws, home, protectedPaths: [keenHome] });
    const cases: [string, string][] = [
      [join(home, ".ssh", "id_rsa"), "key.txt"],
      [join(keenHome, "config.json"), "settings.json"],
      [join(ws, ".env"), "notes.txt"],
      [join(home, ".codex", "auth.json"), "auth-copy.json"],
    ];
    for (const [target, name] of cases) {
      linkSync(target, join(ws, name));
      refused(openGuarded(guard, join(ws, name), "read"), new RegExp(`is a hard link to ${target.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    }
  });
});
