import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { DANGEROUS_FILES, getDangerousDirectories } from "@anthropic-ai/sandbox-runtime/dist/sandbox/sandbox-utils.js";
import { sandboxSupport } from "../../app/sandbox/deps.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox, parseLines } from "./harness.js";

// The library write-protects its dangerous names below its working directory with a ripgrep scan;
// Keen runs that scan in an empty directory and finds them itself (app/sandbox/protected-paths.ts).
// Every name the library lists, nested where the library would find it, must stay read-only.
const support = sandboxSupport();
const skip = support.ok ? false : `no sandbox on this machine: ${support.missing} (${support.install})`;
if (skip) process.stderr.write(`sandbox-nested-protected.test.ts: skipped: ${skip}\n`);

const server = useMockLLMServer();

test("each of the library's dangerous names, nested in subdirectories, cannot be written by a sandboxed command", { skip }, async () => {
  const sb = makeSandbox(server.url);
  execFileSync("git", ["init", "-q"], { cwd: sb.workspace });
  // Files down to three levels, directories (and a nested repository's hooks and config) down to two: the library's depth.
  const files = DANGEROUS_FILES.flatMap((name) => [join("pkg", name), join("pkg", "lib", name)]);
  const inDirs = [...getDangerousDirectories(), ".git/hooks"].map((dir) => join("pkg", dir, "file"));
  const targets = [...files, ...inDirs, join("pkg", ".git", "config")];
  // A repository is known by its HEAD (which itself stays writable): hooks it did not have are removed after the command.
  mkdirSync(join(sb.workspace, "sub", ".git"), { recursive: true });
  writeFileSync(join(sb.workspace, "sub", ".git", "HEAD"), "ref: refs/heads/main\n");
  for (const target of targets) {
    mkdirSync(join(sb.workspace, dirname(target)), { recursive: true });
    writeFileSync(join(sb.workspace, target), "original\n");
  }
  const attempts = targets.map((t) => `if echo changed >> ${t} 2>/dev/null; then echo "WROTE ${t}"; fi`);
  const creations = [...[...getDangerousDirectories(), ".git/hooks"].map((dir) => `pkg/${dir}/new`), "sub/.git/hooks/pre-commit"]
    .map((path) => `if mkdir -p ${dirname(path)} 2>/dev/null && echo new > ${path} 2>/dev/null; then echo "MADE ${path}"; fi`);
  creations[creations.length - 1] = "mkdir -p sub/.git/hooks && echo new > sub/.git/hooks/pre-commit";
  const command = [...attempts, ...creations, "echo fine > pkg/lib/plain.txt && echo plain-written"].join("\n");
  server.enqueue({ toolCalls: [{ name: "bash", input: { command } }] }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "--sandbox", "on", "go"]);
  assert.equal(r.code, 0, r.stderr);
  const result = parseLines(r.stdout).find((l) => l.kind === "tool-result")?.result as string;
  assert.match(result, /plain-written/, "the command ran and may write beside them");
  assert.doesNotMatch(result, /WROTE|MADE/, result);
  assert.match(result, /<sandbox_removed>sub\/\.git\/hooks: /, result);
  assert.equal(existsSync(join(sb.workspace, "sub", ".git", "hooks")), false);
  for (const target of targets) assert.equal(readFileSync(join(sb.workspace, target), "utf8"), "original\n", target);
  assert.equal(readFileSync(join(sb.workspace, "pkg", "lib", "plain.txt"), "utf8"), "fine\n");
});
