import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { sandboxSupport } from "../../app/sandbox/deps.js";
import { sandboxPolicy } from "../../app/sandbox/policy.js";
import { createCommandSandbox, disposeSandbox } from "../../app/sandbox/runtime.js";
import { makeTempDir } from "../temp.js";

// The layers between bubblewrap and the command run in dash where there is one (runtime.ts,
// layerShell), which drops variables whose names are no shell identifiers: the command's bash
// must still get every variable it would get unconfined.
const skip = sandboxSupport().ok ? false : "no sandbox on this machine";

// The library's proxies would keep this process alive.
after(() => disposeSandbox());

async function run(command: string): Promise<string> {
  const root = realpathSync(makeTempDir("keen-layer-shell-"));
  mkdirSync(join(root, "ws"));
  mkdirSync(join(root, "tmp"));
  const sandbox = createCommandSandbox(sandboxPolicy({ workspace: join(root, "ws"), tmpDir: join(root, "tmp"), guard: { home: join(root, "home"), protectedPaths: [] } }));
  const wrapped = await sandbox.wrap(`exec 2>&1; ${command}`);
  const child = spawn("bash", ["-c", wrapped.script], { stdio: ["ignore", "pipe", "pipe"], env: process.env });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise((resolve) => child.on("close", resolve));
  wrapped.finish();
  return `${out}exit ${code}`;
}

test("a sandboxed command gets exported bash functions and variables of any name, as unconfined", { skip }, async () => {
  process.env["BASH_FUNC_keen_probe%%"] = "() {  echo from-exported-function; }";
  process.env["odd.name-var"] = "kept";
  try {
    const out = await run("keen_probe; env | grep '^odd.name-var='; exit 3");
    assert.match(out, /from-exported-function\nodd\.name-var=kept\nexit 3$/, out);
  } finally {
    delete process.env["BASH_FUNC_keen_probe%%"];
    delete process.env["odd.name-var"];
  }
  const plain = await run("echo \"in $(basename \"$BASH\")\"; exit 4");
  assert.match(plain, /in bash\nexit 4$/, "the command itself runs in bash");
});
