import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type * as z from "zod";
import { configChecks } from "../../app/cli/config-check.js";
import { configSchemas, loadConfig } from "../../app/cli/config.js";
import { makeTempDir } from "../temp.js";

test("a config text recorded as valid is known to the same build only, and per schema", () => {
  const dir = makeTempDir("keen-config-check-");
  const text = '{"model":"anthropic/x"}';
  assert.equal(configChecks(dir, "b1").has("user", text), false);
  configChecks(dir, "b1").add("user", text);
  assert.equal(configChecks(dir, "b1").has("user", text), true, "a later start of the same build knows it");
  assert.equal(configChecks(dir, "b1").has("project", text), false, "valid as a user config says nothing of a project config");
  assert.equal(configChecks(dir, "b1").has("user", text + " "), false, "an edited file is checked again");
  assert.equal(configChecks(dir, "b2").has("user", text), false, "another build checks again");
  assert.equal(configChecks(dir, undefined).has("user", text), false, "without a build id (run from source) nothing is known");
  // The record holds hashes, never the config's text (it may name headers or keys).
  assert.doesNotMatch(readFileSync(join(dir, "checked-config.json"), "utf8"), /anthropic/);
});

test("a garbled record or one that cannot be written only means checking again", () => {
  const dir = makeTempDir("keen-config-check-");
  writeFileSync(join(dir, "checked-config.json"), "{not json");
  assert.equal(configChecks(dir, "b1").has("user", "{}"), false);
  configChecks(dir, "b1").add("user", "{}");
  assert.equal(configChecks(dir, "b1").has("user", "{}"), true, "a garbled record is replaced");
  if (process.getuid?.() === 0) return; // root writes anywhere: the read-only case cannot be made
  const locked = makeTempDir("keen-config-check-");
  chmodSync(locked, 0o500);
  assert.doesNotThrow(() => configChecks(locked, "b1").add("user", "{}"));
  assert.deepEqual(readdirSync(locked), [], "nothing half-written is left");
  chmodSync(locked, 0o700);
});

test("loadConfig from source (no build id) checks with zod each time and records nothing; an invalid config is refused", () => {
  const home = makeTempDir("keen-config-check-");
  const workspace = makeTempDir("keen-config-check-ws-");
  const paths = { configFile: join(home, "config.json"), dataDir: home };
  writeFileSync(paths.configFile, JSON.stringify({ stdinGraceMs: 5, retry: { baseDelayMs: 1 } }));
  // From source there is no build id: loadConfig checks with zod every time and records nothing.
  assert.equal(loadConfig(paths, workspace).stdinGraceMs, 5);
  assert.deepEqual(readdirSync(home), ["config.json"]);
  writeFileSync(paths.configFile, JSON.stringify({ stdinGraceMs: -1 }));
  assert.throws(() => loadConfig(paths, workspace), /config\.json: stdinGraceMs: /);
});

/**
 * What makes the record sound: a valid config parses to itself, so reading it without zod gives what zod
 * would. A default, a transform or a catch anywhere in the schemas would break that; none may be added.
 */
test("the config schemas have no defaults, transforms or catches: a valid config parses to itself", () => {
  const changes = new Set(["default", "prefault", "catch", "transform", "pipe", "success", "readonly", "nan"]);
  const found: string[] = [];
  const walk = (schema: z.ZodType, path: string, seen: Set<unknown>) => {
    if (seen.has(schema)) return;
    seen.add(schema);
    const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
    if (changes.has(def.type)) found.push(`${path || "(top)"}: ${def.type}`);
    const children = (value: unknown, at: string) => {
      if (value && typeof value === "object" && "_zod" in value) walk(value as z.ZodType, at, seen);
    };
    for (const key of ["innerType", "element", "keyType", "valueType", "left", "right", "in", "out"]) children(def[key], `${path}${key === "element" ? "[]" : ""}`);
    for (const option of (def.options as unknown[] | undefined) ?? []) children(option, `${path}|`);
    for (const [name, value] of Object.entries((def.shape as Record<string, unknown> | undefined) ?? {})) children(value, path ? `${path}.${name}` : name);
  };
  const { user, project } = configSchemas();
  walk(user, "", new Set());
  walk(project, "project:", new Set());
  assert.deepEqual(found, []);
  // And the walk sees the schemas' depth: a rich config parses to an equal value.
  const config = {
    model: "p/m",
    providers: { p: { kind: "openai", baseURL: "http://localhost:1/v1", headers: { "x-h": "v" }, defaultModel: "m", models: { m: { contextWindow: 1000, price: { input: 1, output: 2 } } } } },
    mcpServers: { s: { command: "x", args: ["a"], env: { A: "b" } }, h: { url: "http://h", type: "http" } },
    hooks: { PreToolUse: [{ matcher: "bash", hooks: [{ type: "command", command: "true", timeout: 3 }] }] },
    retry: { maxRetries: 1 }, stdinGraceMs: 0, permissionMode: "ask", sandbox: { mode: "auto", network: { allowedDomains: ["a.b"] } },
  };
  assert.deepEqual(user.parse(config), config);
  assert.ok(found.length === 0 && walkCount(user) > 50, "the walk reached the nested schemas");
});

function walkCount(schema: z.ZodType): number {
  let count = 0;
  const visit = (s: unknown) => {
    if (!s || typeof s !== "object" || !("_zod" in s)) return;
    count++;
    const def = (s as { _zod: { def: Record<string, unknown> } })._zod.def;
    for (const key of ["innerType", "element", "keyType", "valueType"]) visit(def[key]);
    for (const option of (def.options as unknown[] | undefined) ?? []) visit(option);
    for (const value of Object.values((def.shape as Record<string, unknown> | undefined) ?? {})) visit(value);
  };
  visit(schema);
  return count;
}
