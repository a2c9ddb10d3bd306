import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { loadConfig } from "../../app/cli/config.js";
import { createGlobTool } from "../../app/tools/glob.js";
import { createGrepTool } from "../../app/tools/grep.js";
import { makeTempDir } from "../temp.js";
import { call, tempWorkspace } from "./helpers.js";

// The user config's `search.budgetMs` (docs/config.md) reaches grep and glob through the tool
// context; run-hostile-input.test.ts shows a whole `keen run` stopping on it.

const t = tempWorkspace();
// A file name that makes a glob of many stars backtrack (as in search-budget.test.ts).
t.write({ [`names/${"a".repeat(200)}`]: "" });

test("the context's search budget stops a glob, and both tools tell the model their budget", async () => {
  const ctx = { ...t.ctx(), searchBudgetMs: 400 };
  const result = await createGlobTool(ctx).run({ pattern: `names/${"*a".repeat(16)}*b` }, call());
  assert.equal(result.is_error, true);
  assert.match(result.content, /^glob stopped after 0\.4s, its time budget/);
  assert.match(createGrepTool(ctx, { ripgrep: false }).definition.description, /Each search may take 0\.4s at most/);
  assert.match(createGrepTool(t.ctx(), { ripgrep: false }).definition.description, /Each search may take 10s at most/);
  assert.match(createGrepTool(ctx, { ripgrep: false, budgetMs: 2000 }).definition.description, /Each search may take 2s at most/, "the tool's own option wins");
});

test("search.budgetMs is read from the user's config only, and must be a positive whole number", () => {
  const root = makeTempDir("keen-search-config-");
  const workspace = join(root, "ws");
  mkdirSync(join(workspace, ".keen"), { recursive: true });
  const paths = { configFile: join(root, "config.json"), dataDir: root };
  writeFileSync(paths.configFile, JSON.stringify({ search: { budgetMs: 1500 } }));
  assert.equal(loadConfig(paths, workspace).search?.budgetMs, 1500);
  writeFileSync(paths.configFile, JSON.stringify({ search: { budgetMs: 0 } }));
  assert.throws(() => loadConfig(paths, workspace), /search\.budgetMs/);
  writeFileSync(paths.configFile, "{}");
  writeFileSync(join(workspace, ".keen", "config.json"), JSON.stringify({ search: { budgetMs: 1 } }));
  assert.throws(() => loadConfig(paths, workspace), /"search" is not allowed in a project config/);
});
