import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { sandboxSupport } from "../../app/sandbox/deps.js";
import { sandboxPolicy } from "../../app/sandbox/policy.js";
import { presentReadDenies } from "../../app/sandbox/read-denies.js";
import { createCommandSandbox, disposeSandbox } from "../../app/sandbox/runtime.js";
import { makeTempDir } from "../temp.js";

test("presentReadDenies drops only plain paths that are not there", () => {
  const root = realpathSync(makeTempDir("keen-read-denies-"));
  writeFileSync(join(root, "file"), "");
  mkdirSync(join(root, "dir"));
  const entries = [join(root, "file"), join(root, "dir"), join(root, "absent"), join(root, "absent", "below"), join(root, "file", "below"), join(root, "*.key"), join(root, "a[1]")];
  assert.deepEqual(presentReadDenies(entries), [
    join(root, "file"), join(root, "dir"),
    join(root, "file", "below"), // ENOTDIR, not "not there": the library decides
    join(root, "*.key"), join(root, "a[1]"), // the library reads these as patterns
  ]);
});

// The library's proxies would keep this process alive.
after(() => disposeSandbox());

/** Runs `command` in the sandbox the way bash.ts does; its output. */
async function sandboxed(sandbox: ReturnType<typeof createCommandSandbox>, command: string): Promise<string> {
  const wrapped = await sandbox.wrap(`exec 2>&1; ${command}`);
  const child = spawn("bash", ["-c", wrapped.script], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((resolve) => child.on("close", resolve));
  wrapped.finish();
  return out;
}

test("a denied location that appears after a command is unreadable from the next command on", { skip: sandboxSupport().ok ? false : "no sandbox on this machine" }, async () => {
  const root = realpathSync(makeTempDir("keen-read-denies-"));
  const home = join(root, "home");
  const workspace = join(root, "ws");
  mkdirSync(home);
  mkdirSync(workspace);
  const sandbox = createCommandSandbox(sandboxPolicy({ workspace, tmpDir: join(root, "tmp"), guard: { home, protectedPaths: [] } }));
  mkdirSync(join(root, "tmp"));
  const credentials = join(home, ".aws", "credentials");
  const netrc = join(home, ".netrc");
  const before = await sandboxed(sandbox, `cat ${credentials} ${netrc}; echo ran`);
  assert.match(before, /No such file or directory[\s\S]*No such file or directory[\s\S]*ran/, before);
  mkdirSync(join(home, ".aws"));
  writeFileSync(credentials, "AWS-SECRET");
  writeFileSync(netrc, "NETRC-SECRET");
  const later = await sandboxed(sandbox, `cat ${credentials} ${netrc}; ls ${join(home, ".aws")}; echo ran`);
  assert.doesNotMatch(later, /SECRET|credentials\n/, later);
  assert.match(later, /ran/);
});
