import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

// Every relative link in the README and docs/ points at a file that exists and, with a
// #fragment, at a heading that file has (GitHub's slugs), so moving text cannot strand a link.

const ROOT = resolve(import.meta.dirname, "..");
const pages = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, "").replace(/ /g, "-");
}

function withoutCode(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, (m) => (m.includes("](") ? "" : m));
}

function anchors(file: string): Set<string> {
  const text = readFileSync(file, "utf8").replace(/^```[\s\S]*?^```/gm, "");
  return new Set([...text.matchAll(/^#{1,6} (.*)$/gm)].map((m) => slug(m[1]!)));
}

test("every relative link in the README and docs/ resolves, fragments included", () => {
  const broken: string[] = [];
  for (const page of pages) {
    const text = withoutCode(readFileSync(join(ROOT, page), "utf8"));
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue;
      const [path, fragment] = target!.split("#") as [string, string | undefined];
      const file = path ? resolve(ROOT, dirname(page), path) : join(ROOT, page);
      if (!existsSync(file)) broken.push(`${page}: ${target} (no such file)`);
      else if (fragment && statSync(file).isFile() && file.endsWith(".md") && !anchors(file).has(fragment)) broken.push(`${page}: ${target} (no such heading)`);
    }
  }
  assert.deepEqual(broken, []);
});

test("the checker sees a broken link (it would fail)", () => {
  assert.equal(slug("In an editor (ACP)"), "in-an-editor-acp");
  assert.equal(slug("The TUI: `keen`"), "the-tui-keen");
  assert.ok(!anchors(join(ROOT, "README.md")).has("no-such-heading"));
});
