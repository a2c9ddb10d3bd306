import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import { build } from "esbuild";
import { applyPatch, SANDBOX_PATCHES, sandboxPatches, type SandboxPatch } from "../../scripts/sandbox-patches.mjs";

// What scripts/sandbox-patches.mjs changes in @anthropic-ai/sandbox-runtime when scripts/build.mjs
// bundles it (docs/performance.md, "Per sandboxed call"). What the changes do to a confined command
// is test/e2e/sandbox-proxy.test.ts's; the sandbox tests cover that nothing else moved.
const ROOT = resolve(import.meta.dirname, "../..");
const LIBRARY = dirname(createRequire(import.meta.url).resolve("@anthropic-ai/sandbox-runtime/package.json"));
const bundle = () => readFileSync(resolve(ROOT, "dist/sandbox-runtime.cjs"), "utf8");

test("the build's patch list is not empty, and every patch is in the built dist/sandbox-runtime.cjs", () => {
  assert.ok(SANDBOX_PATCHES.length >= 5, `patches: ${SANDBOX_PATCHES.map((p) => p.name)}`);
  assert.equal(new Set(SANDBOX_PATCHES.map((p) => p.name)).size, SANDBOX_PATCHES.length, "names are unique");
  const text = bundle();
  for (const patch of SANDBOX_PATCHES) {
    assert.ok(patch.why.length > 80 && /Upstream/.test(patch.why), `${patch.name} says why, and what the library would need`);
    // A mark is a string literal of the replacement: minifying keeps it, an unpatched build has none.
    assert.ok(patch.edits.some((e) => e.replace.includes(patch.mark)) && !patch.edits.some((e) => e.find.includes(patch.mark)), patch.name);
    assert.ok(text.includes(patch.mark), `patch "${patch.name}" is not in dist/sandbox-runtime.cjs (npm run build)`);
  }
  // What the patches replace is gone: the relays' wait for two listeners, the SOCKS relay for the mux.
  assert.doesNotMatch(text, /-lt 2 \] \|\| break/);
});

test("each patch matches the installed library exactly once per edit (the build would fail otherwise)", () => {
  for (const patch of SANDBOX_PATCHES) {
    const original = readFileSync(resolve(LIBRARY, patch.file), "utf8");
    for (const edit of patch.edits) assert.equal(original.split(edit.find).length - 1, 1, `${patch.name}: ${edit.find.slice(0, 60)}`);
  }
});

test("an edit that matches nowhere, or twice, fails naming the patch and the file", () => {
  const patch = (find: string): SandboxPatch => ({ name: "demo-patch", file: "dist/x.js", why: "", mark: "", edits: [{ find, replace: "B" }] });
  assert.equal(applyPatch("one A here", patch("A")), "one B here");
  assert.throws(() => applyPatch("nothing here", patch("A")), /sandbox patch "demo-patch" \(edit 1 of 1\): its text occurs 0 times in @anthropic-ai\/sandbox-runtime\/dist\/x\.js/);
  assert.throws(() => applyPatch("A and A", patch("A")), /"demo-patch".*occurs 2 times/);
});

test("the build fails when a patch does not apply, and when a patch's file is never bundled", async () => {
  const quiet = { bundle: true, write: false, platform: "node" as const, format: "cjs" as const, logLevel: "silent" as const };
  const stale: SandboxPatch = { ...SANDBOX_PATCHES[0]!, name: "stale-patch", edits: [{ find: "text the library no longer has", replace: "" }] };
  await assert.rejects(build({ ...quiet, entryPoints: ["@anthropic-ai/sandbox-runtime"], plugins: [sandboxPatches([stale])] }), /"stale-patch"/);
  const elsewhere: SandboxPatch = { ...SANDBOX_PATCHES[0]!, name: "orphan-patch", file: "dist/sandbox/linux-sandbox-utils.js" };
  // An entry that does not import the patched file: nothing applied, and the build says which.
  await assert.rejects(build({ ...quiet, stdin: { contents: "module.exports = 1", resolveDir: ROOT }, plugins: [sandboxPatches([elsewhere])] }), /not applied.*"orphan-patch"/);
  assert.throws(() => sandboxPatches([]).setup({}), /the list is empty/);
});
