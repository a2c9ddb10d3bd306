import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { limitsFor, loadConfig, narrowLimits, stricterMode, type Limits } from "../../app/cli/config.js";

test("narrowLimits: a project that narrows takes effect", () => {
  assert.deepEqual(narrowLimits({}, { disallowedTools: ["bash"], allowedTools: ["bash", "read_file"], maxTurns: 3, permissionMode: "ask" }, "auto"), {
    disallowedTools: ["bash"], allowedTools: ["bash", "read_file"], maxTurns: 3, permissionMode: "ask",
  });
  assert.deepEqual(
    narrowLimits(
      { disallowedTools: ["bash"], allowedTools: ["read_file", "grep", "glob"], maxTurns: 10, permissionMode: "accept-edits" },
      { disallowedTools: ["write_file"], allowedTools: ["grep", "glob", "list"], maxTurns: 2, permissionMode: "read-only" },
    ),
    { disallowedTools: ["bash", "write_file"], allowedTools: ["grep", "glob"], maxTurns: 2, permissionMode: "read-only" },
  );
});

test("narrowLimits: a project that tries to widen changes nothing", () => {
  const user: Limits = { disallowedTools: ["bash"], allowedTools: ["read_file"], maxTurns: 2, permissionMode: "ask" };
  const hostile: Limits[] = [
    { disallowedTools: [] },
    { allowedTools: ["read_file", "bash", "write_file"] },
    { allowedTools: [] , disallowedTools: [] },
    { maxTurns: 1000 },
    { permissionMode: "auto" },
    { permissionMode: "accept-edits" },
  ];
  for (const project of hostile) {
    const merged = narrowLimits(user, project);
    assert.deepEqual(merged.disallowedTools, ["bash"], JSON.stringify(project));
    assert.equal(merged.maxTurns, 2, JSON.stringify(project));
    assert.equal(merged.permissionMode, "ask", JSON.stringify(project));
    for (const name of merged.allowedTools ?? []) assert.ok(user.allowedTools!.includes(name), JSON.stringify(project));
  }
  // An empty project allow-list narrows to nothing; it never means "everything".
  assert.deepEqual(narrowLimits(user, { allowedTools: [] }).allowedTools, []);
  // With no user mode, the front end's default stands in: a project cannot loosen it.
  assert.equal(narrowLimits({}, { permissionMode: "auto" }, "ask").permissionMode, "ask");
  assert.equal(narrowLimits({}, { permissionMode: "read-only" }, "ask").permissionMode, "read-only");
});

test("stricterMode orders auto < accept-edits < ask < read-only", () => {
  const order = ["auto", "accept-edits", "ask", "read-only"] as const;
  for (const [i, a] of order.entries()) {
    for (const [j, b] of order.entries()) assert.equal(stricterMode(a, b), order[Math.max(i, j)]);
  }
  assert.equal(stricterMode(undefined, "auto"), "auto");
  assert.equal(stricterMode("ask", undefined), "ask");
});

function configDirs(user: unknown, project?: unknown) {
  const root = mkdtempSync(join(tmpdir(), "keen-config-"));
  const workspace = join(root, "ws");
  mkdirSync(join(workspace, ".keen"), { recursive: true });
  writeFileSync(join(root, "config.json"), JSON.stringify(user));
  if (project !== undefined) writeFileSync(join(workspace, ".keen", "config.json"), JSON.stringify(project));
  const config = loadConfig({ configFile: join(root, "config.json"), dataDir: root }, workspace);
  rmSync(root, { recursive: true, force: true });
  return config;
}

test("loadConfig + limitsFor: user config, user flags and a hostile project", () => {
  const config = configDirs(
    { tools: { disallowed: ["bash"] }, maxTurns: 5, permissionMode: "accept-edits" },
    { model: "anthropic/claude-haiku-4-5", tools: { disallowed: [], allowed: ["bash", "read_file"] }, maxTurns: 50, permissionMode: "auto" },
  );
  assert.equal(config.model, "anthropic/claude-haiku-4-5");
  assert.equal("tools" in config || "maxTurns" in config || "permissionMode" in config, false, "no un-narrowed limit to read by mistake");
  assert.deepEqual(limitsFor(config), {
    disallowedTools: ["bash"], allowedTools: ["bash", "read_file"], maxTurns: 5, permissionMode: "accept-edits",
  });
  // The user's flags replace the user's config; the project still narrows them.
  assert.deepEqual(limitsFor(config, { disallowedTools: ["grep"], maxTurns: 100, allowedTools: ["read_file", "grep", "list"] }), {
    disallowedTools: ["grep"], allowedTools: ["read_file"], maxTurns: 50, permissionMode: "accept-edits",
  });
  const narrowing = configDirs({}, { tools: { disallowed: ["write_file"] }, maxTurns: 1, permissionMode: "read-only" });
  assert.deepEqual(limitsFor(narrowing, { disallowedTools: ["bash"], maxTurns: 9 }, "auto"), {
    disallowedTools: ["bash", "write_file"], maxTurns: 1, permissionMode: "read-only",
  });
});
