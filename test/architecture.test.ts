import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import type { FileGuard } from "../app/permissions/guard.js";
import { createTools } from "../app/tools/index.js";

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
  // protocol-check.js is the JSONL stream's pure checker: importing it starts nothing.
  const offenders = unit.filter((file) => /from\s+["'][^"']*\/e2e\/(?!protocol-check\.js["'])|["'][^"']*bin\/keen["']/.test(readFileSync(join(ROOT, file), "utf8")));
  assert.deepEqual(offenders, []);
  assert.ok(unit.length > 30, "the check sees the unit tests");
});

test("the permission modes are written once, in protocol/modes.ts: every other list is derived from it", () => {
  const names = ["auto", "accept-edits", "ask", "read-only"];
  const word = (name: string) => new RegExp(`(?<![\\w-])${name}(?![\\w-])`);
  // A code line naming all four modes is a copy of the list (comments may name them).
  const lists = (file: string) => readFileSync(join(ROOT, file), "utf8").split("\n")
    .map((line, i) => ({ line, at: `${file}:${i + 1}` }))
    .filter(({ line }) => !/^\s*(\/\/|\*|\/\*)/.test(line) && names.every((n) => word(n).test(line)));
  const all = ["protocol", "app", "storage", "themes"].flatMap((dir) => sourceFiles(dir));
  assert.deepEqual(lists("protocol/modes.ts").length, 1, "the checker sees the source list");
  assert.deepEqual(all.filter((f) => f !== "protocol/modes.ts").flatMap((f) => lists(f).map((l) => l.at)), []);
});

test("every module of the product is reachable from a build entry: no test-only code in app/ (the run facade is the documented exception)", () => {
  const build = readFileSync(join(ROOT, "scripts/build.mjs"), "utf8");
  const entries = [...build.matchAll(/["'](app\/[^"']+\.ts)["']/g)].map((m) => m[1]!);
  assert.ok(entries.includes("app/cli/entry.ts") && entries.includes("app/tui/start.ts"), `the build's entries: ${entries.join(", ")}`);
  const files = ["protocol", "app", "storage", "themes"].flatMap((dir) => sourceFiles(dir)).filter((f) => !f.endsWith(".d.ts"));
  const seen = new Set<string>();
  const stack = [...entries];
  while (stack.length) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    stack.push(...localImports(file).map((t) => t.replace(/\.js$/, ".ts")).filter((t) => files.includes(t)));
  }
  // An entry point for programs embedding the engine (docs/stdio.md); no front end of Keen's loads it.
  const documented = ["app/agent/run-facade.ts"];
  assert.deepEqual(files.filter((f) => !seen.has(f) && !documented.includes(f)), []);
});

/*
 * Tools describe themselves (Tool.kind, mutates, describe): the gate, undo, the TUI, ACP and the
 * CLI runner decide by kind. So a built-in tool's name is a string literal in its own file (the
 * one that passes it to defineTool) and nowhere else in app/ or protocol/. Comments don't count.
 */
const NAME_ALLOWED: { file: string; name: string; why: string }[] = [
  { file: "app/agent/cli-tools.ts", name: "*", why: "THE table of the claude CLI's tools and Keen's tools standing for them" },
  { file: "app/sandbox/runtime.ts", name: "bash", why: "the bash executable the sandbox wraps a command in, not the tool" },
  { file: "app/sandbox/spare.ts", name: "bash", why: "the bash executable a sandbox started ahead runs in, not the tool" },
  { file: "app/sandbox/deps.ts", name: "bash", why: "the bash executable looked up on PATH for the sandbox's shell, not the tool" },
  { file: "app/tools/jobs.ts", name: "bash", why: "the bash executable a background job runs in, not the tool" },
  { file: "app/cli/main.ts", name: "list", why: "the `sessions list` and `mcp list` subcommands" },
  { file: "app/tools/search-jobs.ts", name: "*", why: "the search worker's job types (a glob walk, a grep scan), shared by the grep and glob tools" },
  { file: "app/tools/grep.ts", name: "glob", why: "a glob job of the search worker (grep lists the files to scan)" },
];

/** The built-in tools, from the tools index; none runs, so their context is a dummy. */
function builtInNames(): string[] {
  return createTools({ cwd: "/", workspace: "/", guard: {} as FileGuard, env: {} }).map((t) => t.definition.name);
}

/** Each string literal of a source (no comments, no templates with substitutions), and the tool names it passes to defineTool. */
function literals(file: string, text: string): { values: string[]; defines: string[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const values: string[] = [];
  const defines: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) values.push(node.text);
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "defineTool") {
      const first = node.arguments[0];
      if (first && ts.isStringLiteral(first)) defines.push(first.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { values, defines };
}

/** `file: "name"` for each built-in tool name used as a literal outside its own file and the allowed list. */
function toolNameLiterals(files: { file: string; text: string }[], names: string[]): string[] {
  const parsed = files.map(({ file, text }) => ({ file, ...literals(file, text) }));
  const owner = new Map(parsed.flatMap(({ file, defines }) => defines.map((name) => [name, file] as const)));
  const violations: string[] = [];
  for (const { file, values } of parsed) {
    for (const name of new Set(values.filter((v) => names.includes(v)))) {
      if (owner.get(name) === file || file === "app/tools/index.ts") continue;
      if (NAME_ALLOWED.some((a) => a.file === file && (a.name === "*" || a.name === name))) continue;
      violations.push(`${file}: "${name}"`);
    }
  }
  return violations;
}

test("no built-in tool's name is a string literal outside its own file: decide by the tool's kind", () => {
  const names = builtInNames();
  assert.ok(names.length >= 7, "the tools index lists the built-in tools");
  const files = [...sourceFiles("app"), ...sourceFiles("protocol")].map((file) => ({ file, text: readFileSync(join(ROOT, file), "utf8") }));
  const own = new Set(files.flatMap(({ file, text }) => literals(file, text).defines));
  assert.deepEqual(names.filter((n) => !own.has(n)), [], "each built-in tool names itself in its own file (defineTool)");
  assert.deepEqual(toolNameLiterals(files, names), []);
});

test("the tool-name checker catches a comparison outside the tool's file, and ignores comments", () => {
  const files = [
    { file: "app/tools/bash.ts", text: `export const t = defineTool("bash", "d", s, run);` },
    { file: "app/tui/x.ts", text: `// a "bash" comment\nexport const risky = (name: string) => name === "bash";` },
    { file: "app/acp/y.ts", text: "/* `read_file` */ export const x = 1;" },
  ];
  assert.deepEqual(toolNameLiterals(files, ["bash", "read_file"]), ['app/tui/x.ts: "bash"']);
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
