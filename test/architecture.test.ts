import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");

/** Layers (by folder) and the layers each must never import (STYLE.md "Arrows point one way"). */
const FORBIDDEN: Record<string, string[]> = {
  protocol: ["app", "storage"],
  "app/headless": ["app/agent", "app/providers", "storage"],
  "app/tui": ["app/agent", "app/providers", "storage"],
  "app/acp": ["app/agent", "app/providers", "storage", "app/cli", "app/tools"],
  "app/agent": ["app/tui", "app/headless", "app/cli"],
  "app/providers": ["app/agent", "storage", "app/tui", "app/headless", "app/cli"],
  "app/mcp": ["app/agent", "storage", "app/tui", "app/headless", "app/cli", "app/providers"],
  storage: ["app"],
};

function sourceFiles(dir: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

function localImports(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const specs = [...text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]!);
  return specs.map((spec) => relative(ROOT, resolve(ROOT, dirname(file), spec)));
}

test("imports point one way between layers", () => {
  const violations: string[] = [];
  for (const [layer, banned] of Object.entries(FORBIDDEN)) {
    for (const file of sourceFiles(layer)) {
      for (const target of localImports(file)) {
        if (banned.some((b) => target === b || target.startsWith(`${b}/`))) violations.push(`${file} imports ${target}`);
      }
    }
  }
  assert.deepEqual(violations, []);
});

test("the checker sees imports (it would catch a violation)", () => {
  assert.ok(localImports("app/agent/turn.ts").includes("app/agent/step.js"));
});

test("no import cycles among our modules (type-only imports included)", () => {
  const files = ["protocol", "app", "storage"].flatMap((dir) => sourceFiles(dir));
  const edges = new Map(files.map((f) => [f, localImports(f).map((t) => t.replace(/\.js$/, ".ts")).filter((t) => files.includes(t))]));
  const cycles: string[] = [];
  const state = new Map<string, "open" | "done">();
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "open") {
      cycles.push([...path.slice(path.indexOf(file)), file].join(" → "));
      return;
    }
    state.set(file, "open");
    for (const next of edges.get(file) ?? []) visit(next, [...path, file]);
    state.set(file, "done");
  };
  for (const file of files) visit(file, []);
  assert.deepEqual(cycles, []);
});

test('zod is imported as a namespace: `import { z } from "zod"` bundles every locale (+350 KB in the start-up snapshot)', () => {
  const offenders = ["protocol", "app", "storage", "themes"].flatMap((dir) => sourceFiles(dir))
    .filter((file) => /import\s*\{\s*z\s*\}\s*from\s*["']zod["']/.test(readFileSync(join(ROOT, file), "utf8")));
  assert.deepEqual(offenders, []);
});

test("unit tests (outside test/e2e and test/build) start no Keen: npm run test:unit stays quick", () => {
  const unit = sourceFiles("test").filter((f) => f.endsWith(".test.ts") && !f.startsWith("test/e2e/") && !f.startsWith("test/build/"));
  const offenders = unit.filter((file) => /from\s+["'][^"']*\/e2e\/|["'][^"']*bin\/keen["']/.test(readFileSync(join(ROOT, file), "utf8")));
  assert.deepEqual(offenders, []);
  assert.ok(unit.length > 30, "the check sees the unit tests");
});

test("front ends open sessions through the host: only app/cli/host.ts builds an engine, a store or a preparer for them", () => {
  const engineUsers = sourceFiles("app/cli").filter((file) => localImports(file).includes("app/agent/engine.js"));
  assert.deepEqual(engineUsers, ["app/cli/host.ts"]);
  const frontEnds = ["run", "stdio", "tui", "acp", "sessions-compact"].map((name) => `app/cli/${name}.ts`);
  const opening = frontEnds.filter((file) =>
    localImports(file).some((target) => ["storage/level-store.js", "app/cli/engine-setup.js", "app/cli/cassette-setup.js"].includes(target)));
  assert.deepEqual(opening, []);
  assert.ok(frontEnds.every((file) => localImports(file).length > 0), "the check sees the front ends' imports");
});
