import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sandboxSupport } from "../../app/sandbox/deps.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";

// Keen finds the workspace's secret-named files itself and keeps what it listed between commands
// (app/sandbox/secret-paths.ts): what one command creates must still be hidden from the next.
const support = sandboxSupport();
const skip = support.ok ? false : `no sandbox on this machine: ${support.missing} (${support.install})`;
if (skip) process.stderr.write(`sandbox-secrets-incremental.test.ts: skipped: ${skip}\n`);

const server = useMockLLMServer();

/** One headless run whose model makes one bash call per step, in order; the bash results. */
async function steps(sb: ReturnType<typeof makeSandbox>, commands: string[]) {
  server.enqueue(...commands.map((command) => ({ toolCalls: [{ name: "bash", input: { command } }] })), { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "--sandbox", "on", "go"]);
  assert.equal(r.code, 0, r.stderr);
  return parseLines(r.stdout).filter((l) => l.kind === "tool-result").map((l) => l.result as string);
}

function gitRepo() {
  const sb = makeSandbox(server.url);
  execFileSync("git", ["init", "-q"], { cwd: sb.workspace });
  return sb;
}

test("a secret file one command creates cannot be read by the next command of the same run, wherever it is", { skip }, async () => {
  const sb = gitRepo();
  // A big-ish tree listed once before the first command, so the later ones work from what was listed.
  for (let i = 0; i < 20; i++) {
    mkdirSync(join(sb.workspace, "node_modules", `pkg${i}`, "lib"), { recursive: true });
    writeFileSync(join(sb.workspace, "node_modules", `pkg${i}`, "lib", "index.js"), "");
  }
  const results = await steps(sb, [
    "mkdir -p sub deep/a/b && echo CREATED-ENV > sub/.env && echo CREATED-KEY > node_modules/pkg3/lib/id_rsa && echo CREATED-PEM > deep/a/b/tls.pem && cat sub/.env",
    "cat sub/.env; cat node_modules/pkg3/lib/id_rsa; cat deep/a/b/tls.pem; echo end",
    "mkdir -p moved && mv sub moved/ 2>&1; echo CREATED-LATE > moved/.envrc; echo step3",
    "cat moved/sub/.env sub/.env moved/.envrc 2>&1; ls moved; echo end",
  ]);
  assert.match(results[0]!, /CREATED-ENV/, "a command reads what it has just written (mounts are made when it starts)");
  for (const result of results.slice(1)) assert.doesNotMatch(result, /CREATED-/, result);
  assert.match(results[1]!, /sub\/\.env: (Permission denied|No such)/);
  assert.match(results[1]!, /id_rsa: (Permission denied|No such)/);
  assert.match(results[1]!, /tls\.pem: (Permission denied|No such)/);
  assert.match(results[1]!, /end/, "the command ran");
  assert.match(results[3]!, /end/);
  const body = JSON.stringify(server.requests.slice(2).map((r) => r.body));
  assert.doesNotMatch(body.replace(/echo CREATED-\w+/g, ""), /CREATED-(KEY|PEM|LATE)/, "the model never saw the contents");
});

test("a .env present from the start, at the top and nested, is unreadable; a file beside it is not", { skip }, async () => {
  const sb = gitRepo();
  writeFileSync(join(sb.workspace, ".env"), "TOP-SECRET-VALUE");
  mkdirSync(join(sb.workspace, "pkg", "conf"), { recursive: true });
  writeFileSync(join(sb.workspace, "pkg", "conf", "prod.env"), "NESTED-SECRET-VALUE");
  writeFileSync(join(sb.workspace, "pkg", "conf", "plain.txt"), "plain-content");
  const [first, second] = await steps(sb, ["cat .env pkg/conf/prod.env pkg/conf/plain.txt 2>&1", "cat .env 2>&1; cat pkg/conf/plain.txt"]);
  for (const result of [first!, second!]) {
    assert.doesNotMatch(result, /SECRET-VALUE/);
    assert.match(result, /plain-content/);
  }
});
