import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { createFileGuard } from "../../app/permissions/file-guard.js";
import type { GuardDecision } from "../../app/permissions/guard.js";

const base = realpathSync(mkdtempSync(join(tmpdir(), "keen-guard-")));
after(() => rmSync(base, { recursive: true, force: true }));
const ws = join(base, "ws");
const home = join(base, "home");
const outside = join(base, "outside");
function put(path: string, content = "x\n") {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}
put(join(home, ".ssh", "id_rsa"), "PRIVATE\n");
put(join(home, ".aws", "credentials"));
put(join(home, ".docker", "config.json"));
put(join(home, ".docker", "other.json"));
put(join(home, "notes.txt"));
put(join(ws, "src", "a.ts"));
put(join(outside, "file.txt"));
mkdirSync(join(ws, ".git", "info"), { recursive: true });

const guard = createFileGuard({ workspace: ws, home, extraDenied: ["~/private", join(ws, "vault")] });

function refused(decision: GuardDecision, pattern: RegExp) {
  assert.equal(decision.ok, false, `expected a refusal, got ${JSON.stringify(decision)}`);
  if (!decision.ok) assert.match(decision.reason, pattern);
}

describe("reads", () => {
  test("workspace files are allowed and resolve to their real path", () => {
    assert.deepEqual(guard.checkRead(join(ws, "src", "a.ts")), { ok: true, path: join(ws, "src", "a.ts") });
    assert.deepEqual(guard.checkRead("src/a.ts"), { ok: true, path: join(ws, "src", "a.ts") });
  });

  test("files outside the workspace may be read, unless denied", () => {
    assert.equal(guard.checkRead(join(outside, "file.txt")).ok, true);
    assert.equal(guard.checkRead(join(home, "notes.txt")).ok, true);
  });

  test(".. traversal is resolved before the check", () => {
    refused(guard.checkRead(join(ws, "src", "..", "..", "home", ".ssh", "id_rsa")), /^Refused: .*\.ssh\/id_rsa is a credential file; Keen's file tools never read or write secrets\.$/);
    refused(guard.checkRead("../home/.aws/credentials"), /credential file/);
  });

  test("credential paths in home", () => {
    refused(guard.checkRead(join(home, ".ssh")), /credential/);
    refused(guard.checkRead(join(home, ".docker", "config.json")), /credential/);
    assert.equal(guard.checkRead(join(home, ".docker", "other.json")).ok, true);
    refused(guard.checkRead(join(home, ".netrc")), /credential/);
  });

  test("a symlink inside the workspace pointing into ~/.ssh is refused", () => {
    symlinkSync(join(home, ".ssh"), join(ws, "keys"));
    symlinkSync(join(home, ".ssh", "id_rsa"), join(ws, "innocent.txt"));
    refused(guard.checkRead(join(ws, "keys", "id_rsa")), /-> .*home\/\.ssh\/id_rsa\) is a credential file/);
    refused(guard.checkRead(join(ws, "innocent.txt")), /credential file/);
    refused(guard.checkWrite(join(ws, "keys", "authorized_keys")), /credential file/);
  });

  test("secret file names anywhere", () => {
    for (const name of [".env", ".env.local", ".env.production", "prod.env", ".envrc", "server.pem", "tls.key", "id_rsa", "id_ed25519", "id_ecdsa_sk", "cert.p12", "cert.pfx", "credentials.json", ".netrc"]) {
      refused(guard.checkRead(join(ws, "cfg", name)), /which may hold secrets/);
      refused(guard.checkWrite(join(ws, "cfg", name)), /which may hold secrets/);
    }
    for (const name of [".env.example", ".env.sample", ".env.template", "id_rsa.pub", "env.ts", "environment.md", "keys.ts", "README.md"]) {
      assert.equal(guard.checkRead(join(ws, "cfg", name)).ok, true, name);
      assert.equal(guard.checkWrite(join(ws, "cfg", name)).ok, true, name);
    }
  });

  test("a directory named .env (a Python venv) is not a secret file", () => {
    mkdirSync(join(ws, ".env", "lib"), { recursive: true });
    assert.equal(guard.checkRead(join(ws, ".env")).ok, true);
    assert.equal(guard.checkRead(join(ws, ".env", "lib")).ok, true);
  });

  test("system paths", () => {
    for (const p of ["/etc/shadow", "/etc/sudoers", "/proc/self/environ", "/dev/zero", "/sys/kernel", "/boot/vmlinuz"]) {
      refused(guard.checkRead(p), /protected system path/);
    }
    assert.equal(guard.checkRead("/etc/hostname").ok, true);
  });

  test("extraDenied, with ~ expanded", () => {
    refused(guard.checkRead(join(home, "private", "x")), /deny list/);
    refused(guard.checkRead(join(ws, "vault", "a.txt")), /deny list/);
  });
});

describe("writes", () => {
  test("inside the workspace, including new nested paths", () => {
    assert.deepEqual(guard.checkWrite("new/dir/file.ts"), { ok: true, path: join(ws, "new", "dir", "file.ts") });
  });

  test("outside the workspace is refused", () => {
    refused(guard.checkWrite(join(outside, "file.txt")), new RegExp(`^Refused: writing outside the workspace \\(${ws}\\) is not allowed: ${outside}/file.txt$`));
    refused(guard.checkWrite("../outside/new.txt"), /outside the workspace/);
    refused(guard.checkWrite("/etc/hosts"), /outside the workspace/);
  });

  test("a dangling symlink cannot carry a write out of the workspace", () => {
    symlinkSync(join(outside, "created-by-keen.txt"), join(ws, "dangling"));
    refused(guard.checkWrite(join(ws, "dangling")), /outside the workspace/);
    symlinkSync(join(outside, "no", "such", "dir"), join(ws, "dangling-dir"));
    refused(guard.checkWrite(join(ws, "dangling-dir", "x.txt")), /outside the workspace/);
  });

  test(".git internals are refused", () => {
    refused(guard.checkWrite(join(ws, ".git", "hooks", "pre-commit")), /inside a \.git directory/);
    assert.equal(guard.checkRead(join(ws, ".git", "info")).ok, true);
  });

  test("system directories stay protected even when the workspace contains them", () => {
    const rootGuard = createFileGuard({ workspace: "/", home });
    refused(rootGuard.checkWrite("/usr/local/bin/tool"), /protected system directory/);
    refused(rootGuard.checkWrite("/etc/hosts"), /protected system directory/);
    refused(rootGuard.checkWrite("/proc/self/mem"), /protected system path/);
    assert.equal(rootGuard.checkWrite(join(ws, "ok.txt")).ok, true);
  });

  test("a workspace strictly inside a system directory stays writable", () => {
    const varWs = realpathSync(mkdtempSync("/var/tmp/keen-guard-"));
    after(() => rmSync(varWs, { recursive: true, force: true }));
    const varGuard = createFileGuard({ workspace: varWs, home });
    assert.equal(varGuard.checkWrite(join(varWs, "src", "x.ts")).ok, true);
    refused(varGuard.checkWrite("/var/tmp/elsewhere.txt"), /outside the workspace/);
  });
});

describe("isIgnored", () => {
  const g = join(base, "gi");
  put(join(g, ".gitignore"), "*.log\nbuild/\n!keep.log\n/top-only.txt\n");
  put(join(g, ".git", "info", "exclude"), "scratch/\n");
  put(join(g, "sub", ".gitignore"), "local.txt\n!important.log\n");
  put(join(g, "build", "out.js"));
  put(join(g, "build", "keep.js"));
  put(join(g, "lib", "build"), "a file, not a directory\n");
  put(join(g, "scratch", "notes.md"));
  const gg = createFileGuard({ workspace: g, home });

  test("root rules, directory-only rules and negation", () => {
    assert.equal(gg.isIgnored(join(g, "debug.log")), true);
    assert.equal(gg.isIgnored(join(g, "deep", "er", "debug.log")), true);
    assert.equal(gg.isIgnored(join(g, "keep.log")), false);
    assert.equal(gg.isIgnored(join(g, "build")), true);
    assert.equal(gg.isIgnored(join(g, "build", "out.js")), true);
    assert.equal(gg.isIgnored(join(g, "lib", "build")), false, "build/ only matches directories");
    assert.equal(gg.isIgnored(join(g, "src", "a.ts")), false);
    assert.equal(gg.isIgnored(join(g, "top-only.txt")), true);
    assert.equal(gg.isIgnored(join(g, "sub", "top-only.txt")), false, "anchored rule");
  });

  test("nested .gitignore files apply below their directory and override the root", () => {
    assert.equal(gg.isIgnored(join(g, "sub", "local.txt")), true);
    assert.equal(gg.isIgnored(join(g, "local.txt")), false);
    assert.equal(gg.isIgnored(join(g, "sub", "important.log")), false);
    assert.equal(gg.isIgnored(join(g, "sub", "other.log")), true);
  });

  test(".git/info/exclude counts", () => {
    assert.equal(gg.isIgnored(join(g, "scratch", "notes.md")), true);
  });

  test("paths outside the workspace, and the workspace itself, are not ignored", () => {
    assert.equal(gg.isIgnored(join(outside, "debug.log")), false);
    assert.equal(gg.isIgnored(g), false);
  });
});

describe("Keen's own files and other agents' credentials", () => {
  const k = join(base, "keen-case");
  const kHome = join(k, "home");
  const keenHome = join(k, "keen-home");
  put(join(keenHome, "config.json"), '{"model":"a/b"}');
  put(join(keenHome, "sessions", "s1", "000001.log"));
  put(join(kHome, ".config", "keen", "config.json"));
  put(join(kHome, ".local", "share", "keen", "index", "LOG"));
  const stores = [
    ".claude/.credentials.json", ".claude.json", ".codex/auth.json", ".config/opencode/opencode.json",
    ".local/share/opencode/auth.json", ".gemini/oauth_creds.json", ".pi/agent/auth.json", ".config/github-copilot/apps.json",
  ];
  for (const s of stores) put(join(kHome, s));
  put(join(kHome, "project", "a.ts"));
  // The workspace is the home directory itself: everything below is "inside".
  const homeGuard = createFileGuard({ workspace: kHome, home: kHome, protectedPaths: [keenHome, join(keenHome, "config.json")] });

  test("KEEN_HOME, its config and sessions, and the default XDG locations are refused both ways", () => {
    for (const p of [keenHome, join(keenHome, "config.json"), join(keenHome, "sessions", "s1", "000001.log"), join(kHome, ".config", "keen", "config.json"), join(kHome, ".local", "share", "keen", "index", "LOG")]) {
      refused(homeGuard.checkRead(p), /is Keen's own config or data; Keen's file tools never read or write it/);
      refused(homeGuard.checkWrite(p), /is Keen's own config or data/);
    }
    refused(homeGuard.checkWrite(join(keenHome, "new.json")), /Keen's own config/);
  });

  test("a symlink into KEEN_HOME is refused", () => {
    symlinkSync(join(keenHome, "config.json"), join(kHome, "project", "settings.json"));
    refused(homeGuard.checkRead(join(kHome, "project", "settings.json")), /-> .*keen-home\/config\.json\) is Keen's own config/);
    refused(homeGuard.checkWrite("project/settings.json"), /Keen's own config/);
  });

  test("other agents' stores are refused even when the workspace is home, by relative path too", () => {
    for (const s of stores) {
      refused(homeGuard.checkRead(s), /credential file/);
      refused(homeGuard.checkWrite(join(kHome, s)), /credential file/);
    }
    refused(homeGuard.checkRead(".claude"), /credential file/);
    assert.equal(homeGuard.checkWrite("project/a.ts").ok, true);
  });
});

describe("secret names on directories", () => {
  test("a directory with a secret name protects everything below it", () => {
    for (const p of ["secrets.env/db.txt", "conf/prod.env/x/y.json", "backup/.ssh/id", "backup/.ssh/config", "vendor/.aws/credentials", "certs/tls.key/part1", ".gnupg/pubring.kbx"]) {
      refused(guard.checkRead(join(ws, p)), /is inside a directory named .*, like .*, which may hold secrets/);
      refused(guard.checkWrite(p), /is inside a directory named/);
    }
    refused(guard.checkRead(join(outside, "old-home", ".ssh", "known_hosts")), /inside a directory named \.ssh, like a credential directory/);
  });

  test("the directory itself is refused for listing; a venv named .env stays readable", () => {
    mkdirSync(join(ws, "secrets.env"), { recursive: true });
    refused(guard.checkRead(join(ws, "secrets.env")), /is a directory named secrets\.env, like an environment file/);
    assert.equal(guard.checkRead(join(ws, ".env", "lib", "site.py")).ok, true);
    assert.equal(guard.checkRead(join(ws, "src", "env", "config.ts")).ok, true);
  });

  test("names above the workspace do not count", () => {
    const odd = join(base, "work.env", "proj");
    put(join(odd, "a.txt"));
    const oddGuard = createFileGuard({ workspace: odd, home });
    assert.equal(oddGuard.checkRead(join(odd, "a.txt")).ok, true);
    assert.equal(oddGuard.checkWrite("b.txt").ok, true);
  });
});

describe("the project's .keen config", () => {
  test("is readable, but written only when the user allows it", () => {
    put(join(ws, ".keen", "config.json"), '{"model":"a/b"}');
    assert.equal(guard.checkRead(join(ws, ".keen", "config.json")).ok, true);
    for (const p of [".keen/config.json", ".keen/other.json", "sub/.keen/config.json"]) {
      refused(guard.checkWrite(p), /this project's \.keen config directory, which chooses the next run's model and tools; writing it needs "guard": \{ "allowProjectConfigEdits": true \}/);
    }
    symlinkSync(join(ws, ".keen", "config.json"), join(ws, "innocent.json"));
    refused(guard.checkWrite("innocent.json"), /\.keen config directory/);
    const open = createFileGuard({ workspace: ws, home, allowProjectConfigEdits: true });
    assert.equal(open.checkWrite(".keen/config.json").ok, true);
  });
});
