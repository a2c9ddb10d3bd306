// Bundles app/cli/entry.ts into dist/ with esbuild: one ESM entry plus lazily
// loaded chunks, so start-up pays only for the command that runs.
import { build } from "esbuild";
import { readFileSync, renameSync, rmSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
// Built aside and swapped in, so a keen started meanwhile (tests, another build) never finds dist/ half-written.
const dist = new URL("../dist", import.meta.url);
const staging = new URL(`../dist.tmp-${process.pid}`, import.meta.url);
rmSync(staging, { recursive: true, force: true });
await build({
  entryPoints: { keen: "app/cli/entry.ts" },
  outdir: staging.pathname,
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
rmSync(dist, { recursive: true, force: true });
renameSync(staging, dist);
