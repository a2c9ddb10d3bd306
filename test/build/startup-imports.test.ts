/**
 * What each command loads before it does anything, read from the built bundle
 * (dist/, which `npm test` builds first): a chunk's static imports load with it,
 * `import()` targets only when reached, and its source map names the modules in
 * it. Start-up cost is measured by `npm run bench`; this keeps the structure that
 * makes it low from eroding unnoticed (no timings here).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";

const DIST = resolve(import.meta.dirname, "../../dist");

/** Static imports of a chunk (`import{…}from"./x.js"` / `import"./x.js"`), not `import("./x.js")`. */
function staticImports(chunk: string): string[] {
  const code = readFileSync(join(DIST, chunk), "utf8");
  return [...code.matchAll(/import(?:\s*\{[^}]*\}\s*from|\s*\*\s*as\s+\w+\s+from|\s+\w+\s+from)?\s*"\.\/([^"]+)"/g)].map((m) => m[1]!);
}

function dynamicImports(chunk: string): string[] {
  const code = readFileSync(join(DIST, chunk), "utf8");
  return [...code.matchAll(/import\("\.\/([^"]+)"\)/g)].map((m) => m[1]!);
}

/** The chunk and every chunk it statically imports, transitively: what loading it evaluates. */
function staticClosure(chunk: string): string[] {
  const seen = new Set<string>();
  const stack = [chunk];
  while (stack.length) {
    const next = stack.pop()!;
    if (seen.has(next)) continue;
    seen.add(next);
    stack.push(...staticImports(next));
  }
  return [...seen];
}

/** Source modules bundled into these chunks, as node_modules package names or repo paths. */
function modulesOf(chunks: string[]): Set<string> {
  const modules = new Set<string>();
  for (const chunk of chunks) {
    const map = JSON.parse(readFileSync(join(DIST, `${chunk}.map`), "utf8")) as { sources: string[] };
    for (const source of map.sources) {
      const path = source.replace(/^(\.\.\/)+/, "");
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(path);
      modules.add(pkg ? (pkg[1] === "zod" && pkg[2]!.includes("/locales/") ? `zod/${pkg[2]}` : pkg[1]!) : path);
    }
  }
  return modules;
}

const built = existsSync(join(DIST, "keen.js"));

test("the entry chunk loads commander and the CLI shell only (`keen --version` pays for nothing else)", { skip: !built && "dist/ not built" }, () => {
  const modules = [...modulesOf(staticClosure("keen.js"))].sort();
  assert.deepEqual(
    modules.filter((m) => m !== "commander" && !/^app\/cli\/(entry|main|errors)\.ts$/.test(m)),
    [],
    `keen.js statically loads ${modules.join(", ")}`,
  );
});

test("`keen run` loads no SDK, protocol schema, glob or proxy code before it needs them", { skip: !built && "dist/ not built" }, () => {
  const run = dynamicImports("keen.js").find((chunk) => modulesOf([chunk]).has("app/cli/run.ts"));
  assert.ok(run, "no chunk holds app/cli/run.ts");
  const modules = modulesOf(staticClosure(run));
  const unwanted = [
    "@anthropic-ai/sdk", "openai", "undici", "ajv", "tinyglobby", "fdir", "picomatch",
    // The zod schemas of the protocol: only `keen protocol schema`, replays and tests need them (see protocol/kinds.ts).
    "protocol/events.ts", "protocol/result.ts", "protocol/jsonl.ts",
  ];
  assert.deepEqual(unwanted.filter((m) => modules.has(m)), []);
  // `import { z } from "zod"` makes the whole namespace live, every locale included: use `import * as z from "zod"`.
  assert.deepEqual([...modules].filter((m) => m.startsWith("zod/") && !m.endsWith("/en.js")), []);
});
