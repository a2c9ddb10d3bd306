import assert from "node:assert/strict";
import { mkdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, test } from "node:test";
import { findWorkspace } from "../../app/tools/workspace.js";
import { makeTempDir } from "../temp.js";

const base = realpathSync(makeTempDir("keen-ws-"));
after(() => rmSync(base, { recursive: true, force: true }));

test("the nearest directory with a .git directory", () => {
  mkdirSync(join(base, "repo", ".git"), { recursive: true });
  mkdirSync(join(base, "repo", "a", "b"), { recursive: true });
  assert.equal(findWorkspace(join(base, "repo", "a", "b")), join(base, "repo"));
  assert.equal(findWorkspace(join(base, "repo")), join(base, "repo"));
});

test("a .git file (worktree, submodule) counts, and the nearest one wins", () => {
  mkdirSync(join(base, "repo", "mod", "src"), { recursive: true });
  writeFileSync(join(base, "repo", "mod", ".git"), "gitdir: ../.git/modules/mod\n");
  assert.equal(findWorkspace(join(base, "repo", "mod", "src")), join(base, "repo", "mod"));
});

test("outside git: cwd itself (resolved)", () => {
  mkdirSync(join(base, "plain", "x"), { recursive: true });
  assert.equal(findWorkspace(join(base, "plain", "x", "..", "x")), join(base, "plain", "x"));
});
