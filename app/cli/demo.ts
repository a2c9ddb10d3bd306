import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The shipped demo: a cassette recorded by scripts/record-demo.ts against
 * this workspace, replayed by `keen run --replay demo`. The files and the
 * prompt live here so the recording and every replay use the same ones.
 */
export const DEMO_NAME = "demo";

/** The prompt the demo cassette answers (used when `--replay demo` gets none). */
export const DEMO_PROMPT = "The test in this project fails. Find out why, fix it, and run the test.";

/** The demo workspace: a one-function project whose test fails on a typo. */
export const DEMO_FILES: Record<string, string> = {
  "package.json": `${JSON.stringify({ name: "keen-demo", private: true, type: "module" }, null, 2)}\n`,
  "greet.js": 'export function greet(name) {\n  return "Helo, " + name + "!";\n}\n',
  "test.js": [
    'import { greet } from "./greet.js";',
    "",
    'const got = greet("Keen");',
    'if (got !== "Hello, Keen!") {',
    '  console.error(`FAIL: expected "Hello, Keen!", got "${got}"`);',
    "  process.exit(1);",
    "}",
    'console.log("ok: greet works");',
    "",
  ].join("\n"),
};

/**
 * The demo cassette's path. Beside this module in the source tree; the build
 * copies it beside the bundle (dist/), where the bundle's `import.meta.url`
 * points.
 */
export function demoCassettePath(): string {
  return fileURLToPath(new URL("./demo.cassette.jsonl", import.meta.url));
}

/** A fresh temporary directory holding the demo workspace; left in place so the user can look at what the run changed. */
export function createDemoWorkspace(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "keen-demo-")));
  for (const [name, content] of Object.entries(DEMO_FILES)) writeFileSync(join(dir, name), content);
  return dir;
}
