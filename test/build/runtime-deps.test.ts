import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { builtinModules } from "node:module";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
const DIST = resolve(ROOT, "dist");

/**
 * Specifiers the bundles name but never load from node_modules: ajv writes `require("ajv/dist/runtime/…")`
 * (and ajv-formats' `require("ajv-formats/dist/formats")`) into the code it generates for its standalone
 * mode (Keen compiles schemas in memory), and linkedom
 * tries `canvas` inside a try/catch with a stand-in.
 */
const NEVER_LOADED = [/^ajv\/dist\/runtime\//, /^ajv-formats\/dist\//, /^canvas$/];

const packageOf = (specifier: string) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/");

test("what the bundles require from node_modules at run time is a dependency; everything else is bundled, so a devDependency", () => {
  const pkg = JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8"));
  const lock = JSON.parse(readFileSync(resolve(ROOT, "package-lock.json"), "utf8")).packages;
  const builtins = new Set(builtinModules);
  const required = new Set<string>();
  for (const file of readdirSync(DIST).filter((f) => f.endsWith(".cjs"))) {
    for (const [, specifier] of readFileSync(resolve(DIST, file), "utf8").matchAll(/(?:\brequire|\bimport|createRequire\([^)]*\))\("([^"./][^"]*)"\)/g)) {
      const bare = specifier.replace(/^node:/, "");
      if (builtins.has(bare) || builtins.has(bare.split("/")[0]) || NEVER_LOADED.some((re) => re.test(specifier))) continue;
      required.add(packageOf(specifier));
    }
  }
  assert.ok(required.has("blessed") && required.has("classic-level"), `the scan finds the run-time requires: ${[...required]}`);
  // Installed for users: the lock marks what only a checkout installs as dev.
  for (const name of required) assert.ok(lock[`node_modules/${name}`] && !lock[`node_modules/${name}`].dev, `dist/ requires ${name} at run time, but an installed package would not have it`);
  for (const name of Object.keys(pkg.dependencies)) {
    const pulls = [name, ...Object.keys(lock[`node_modules/${name}`].dependencies ?? {})];
    // The sandbox library is a side bundle, but its seccomp helpers are files in its package.
    assert.ok(pulls.some((p) => required.has(p)) || name === "@anthropic-ai/sandbox-runtime", `${name} is a dependency, but dist/ requires nothing of it: bundled code belongs in devDependencies`);
  }
});
