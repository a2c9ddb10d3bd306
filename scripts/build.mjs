// Bundles app/cli/entry.ts into dist/ with esbuild: one ESM entry plus lazily
// loaded chunks, so start-up pays only for the command that runs.
import { build } from "esbuild";
import { readFileSync, rmSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: { keen: "app/cli/entry.ts" },
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  sourcemap: "linked",
  // classic-level loads its native prebuild from its own package directory.
  external: ["classic-level"],
  define: { KEEN_VERSION: JSON.stringify(pkg.version) },
  banner: { js: "import { createRequire as __keenCreateRequire } from 'node:module'; const require = __keenCreateRequire(import.meta.url);" },
  logLevel: "warning",
});
