import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DANGEROUS_FILES, getDangerousDirectories } from "@anthropic-ai/sandbox-runtime/dist/sandbox/sandbox-utils.js";
import { PROTECTED_DIRS, PROTECTED_FILES, protectedPaths, removeCreated } from "../../app/sandbox/protected-paths.js";
import { makeTempDir } from "../temp.js";

test("Keen protects the names the sandbox library protects (a library update that changes them fails here)", () => {
  assert.deepEqual([...PROTECTED_FILES].sort(), [...DANGEROUS_FILES].sort());
  assert.deepEqual([...PROTECTED_DIRS].sort(), [...getDangerousDirectories()].sort());
});

test("protectedPaths: what is there is listed to be made read-only, what is not to be audited, nested repositories' hooks included", async () => {
  const ws = makeTempDir("keen-protected-");
  mkdirSync(join(ws, ".git", "hooks"), { recursive: true });
  writeFileSync(join(ws, ".git", "HEAD"), "ref: refs/heads/main\n");
  writeFileSync(join(ws, ".bashrc"), "");
  mkdirSync(join(ws, "pkg", ".vscode"), { recursive: true });
  writeFileSync(join(ws, "pkg", ".vscode", "settings.json"), "{}");
  mkdirSync(join(ws, "sub", ".git"), { recursive: true });
  writeFileSync(join(ws, "sub", ".git", "HEAD"), "ref: refs/heads/main\n");
  mkdirSync(join(ws, "node_modules", "x"), { recursive: true });
  writeFileSync(join(ws, "node_modules", "x", ".bashrc"), "");
  const found = await protectedPaths(ws, [join(ws, ".keen")]);
  assert.deepEqual(found.existing.map((p) => p.slice(ws.length + 1)).sort(), [".bashrc", ".git/hooks", "pkg/.vscode"]);
  const absent = new Map(found.absent.map(({ path, top }) => [path.slice(ws.length + 1), top.slice(ws.length + 1)]));
  assert.equal(absent.get(".git/config"), ".git/config");
  assert.equal(absent.get(".claude/commands"), ".claude");
  assert.equal(absent.get("sub/.git/hooks"), "sub/.git/hooks");
  assert.equal(absent.get(".keen"), ".keen");
  assert.equal(absent.has("node_modules/x/.bashrc"), false);
  assert.equal(absent.has(".bashrc"), false);
});

test("removeCreated removes what a command made of the absent paths, and the directories it made for them, nothing else", async () => {
  const ws = makeTempDir("keen-protected-");
  const { absent } = await protectedPaths(ws);
  mkdirSync(join(ws, ".claude", "commands"), { recursive: true });
  writeFileSync(join(ws, ".claude", "commands", "c.md"), "x");
  mkdirSync(join(ws, ".idea"));
  writeFileSync(join(ws, "mine.txt"), "");
  assert.deepEqual(removeCreated(ws, absent).sort(), [".claude/commands", ".idea"]);
  assert.deepEqual(readdirSync(ws), ["mine.txt"]);
  mkdirSync(join(ws, ".claude", "commands"), { recursive: true });
  writeFileSync(join(ws, ".claude", "settings.json"), "{}");
  assert.deepEqual(removeCreated(ws, absent), [".claude/commands"]);
  assert.deepEqual(readdirSync(join(ws, ".claude")), ["settings.json"], "a directory holding something else stays");
});
