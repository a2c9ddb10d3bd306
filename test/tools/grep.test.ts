import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { createGrepTool, findRipgrep, grepFallback } from "../../app/tools/grep.js";
import type { Tool } from "../../app/tools/tool.js";
import { call, tempWorkspace, type TempWorkspace } from "./helpers.js";

const rg = findRipgrep();
if (!rg) console.log("# rg is not on PATH: the ripgrep engine tests are skipped; the JS fallback is still tested");

function fixture(git: boolean): TempWorkspace {
  const t = tempWorkspace({ git });
  t.write({
    ".gitignore": "ignored/\n*.tmp\n",
    "src/a.ts": "import x\nconst needle = 1;\n// Needle upper\n",
    "src/b.py": "needle = 2\n",
    "src/deep/c.py": "needle = 3\n",
    "ignored/c.ts": "needle\n",
    "notes.tmp": "needle\n",
    ".env": "NEEDLE=needle\n",
    "server.pem": "needle\n",
    ".github/workflow.yml": "needle: yes\n",
    "bin.dat": Buffer.from("needle\0binary\n"),
    "many/list.txt": Array.from({ length: 30 }, (_, i) => `haystack ${i + 1}`).join("\n"),
  });
  return t;
}

const all = [".github/workflow.yml:1:needle: yes", "src/a.ts:2:const needle = 1;", "src/b.py:1:needle = 2", "src/deep/c.py:1:needle = 3"];

function engineTests(name: string, make: (t: TempWorkspace, cwd?: string) => Tool, skip: string | false) {
  describe(`grep (${name})`, { skip }, () => {
    const t = fixture(true);
    const grep = make(t);

    test("finds matches as path:line:text, skipping gitignored, secret and binary files", async () => {
      const r = await grep.run({ pattern: "needle" }, call());
      assert.equal(r.is_error, false);
      assert.equal(r.content, all.join("\n"));
      assert.deepEqual(r.details, { pattern: "needle", matches: 4, truncated: false, engine: name });
    });

    test("case_insensitive, glob without and with a slash, path to a file or directory", async () => {
      const ci = await grep.run({ pattern: "needle upper", case_insensitive: true }, call());
      assert.equal(ci.content, "src/a.ts:3:// Needle upper");
      assert.equal((await grep.run({ pattern: "needle", glob: "*.py" }, call())).content, "src/b.py:1:needle = 2\nsrc/deep/c.py:1:needle = 3");
      assert.equal((await grep.run({ pattern: "needle", glob: "src/*.py" }, call())).content, "src/b.py:1:needle = 2");
      assert.equal((await grep.run({ pattern: "n.edle", path: "src/b.py" }, call())).content, "src/b.py:1:needle = 2");
      assert.equal((await grep.run({ pattern: "needle", path: "src/deep" }, call())).content, "src/deep/c.py:1:needle = 3");
    });

    test("paths are relative to cwd", async () => {
      const r = await make(t, "src").run({ pattern: "needle = 3" }, call());
      assert.equal(r.content, "deep/c.py:1:needle = 3");
    });

    test("max_results caps the output with a note", async () => {
      const r = await grep.run({ pattern: "haystack", path: "many", max_results: 5 }, call());
      const lines = r.content.split("\n");
      assert.equal(lines.length, 7);
      for (const line of lines.slice(0, 5)) assert.match(line, /^many\/list\.txt:\d+:haystack \d+$/);
      assert.equal(lines[6], "[Showing the first 5 matches; there are more. Narrow the pattern, path or glob.]");
      assert.equal(r.details?.truncated, true);
    });

    test("no matches, bad regex, refused path", async () => {
      const none = await grep.run({ pattern: "zzz_nothing" }, call());
      assert.equal(none.is_error, false);
      assert.equal(none.content, "No matches found.");
      const bad = await grep.run({ pattern: "(unclosed" }, call());
      assert.equal(bad.is_error, true);
      assert.match(bad.content, /regex|unclosed|parenthes/i);
      const refused = await grep.run({ pattern: "x", path: join(t.home, ".ssh") }, call());
      assert.match(refused.content, /^Refused: .* is a credential file/);
      assert.match((await grep.run({ pattern: "x", path: "missing" }, call())).content, /^Path not found: missing$/);
    });

    test("gitignore is honoured even without a .git directory", async () => {
      const plain = fixture(false);
      const r = await make(plain).run({ pattern: "needle" }, call());
      assert.equal(r.content, all.join("\n"));
    });
  });
}

engineTests("rg", (t, cwd) => createGrepTool(t.ctx(cwd), { ripgrep: rg! }), rg ? false : "rg is not on PATH");
engineTests("js", (t, cwd) => createGrepTool(t.ctx(cwd), { ripgrep: false }), false);

test("grepFallback is usable on its own and stops on abort", async () => {
  const t = fixture(true);
  const ctx = t.ctx();
  const base = { pattern: "needle", root: t.ws, caseInsensitive: false, maxResults: 10, guard: ctx.guard };
  const found = await grepFallback({ ...base, signal: new AbortController().signal });
  assert.deepEqual(found.matches.map((m) => m.path.slice(t.ws.length + 1)), [".github/workflow.yml", "src/a.ts", "src/b.py", "src/deep/c.py"]);
  const aborted = new AbortController();
  aborted.abort();
  assert.deepEqual(await grepFallback({ ...base, signal: aborted.signal }), { matches: [], more: false, error: "The search was interrupted." });
});

test("the fallback never enters node_modules", async () => {
  const t = fixture(true);
  t.write({ "node_modules/pkg/index.js": "needle\n" });
  const r = await createGrepTool(t.ctx(), { ripgrep: false }).run({ pattern: "needle" }, call());
  assert.equal(r.content, all.join("\n"));
});
