// Bundles app/cli/entry.ts into dist/ with esbuild: one ESM entry plus lazily
// loaded chunks, so start-up pays only for the command that runs.
import { build } from "esbuild";
import { readFileSync, renameSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

/**
 * classic-level loads its native prebuild relative to its own directory
 * (`require('node-gyp-build')(__dirname)` in binding.js), so only that file
 * stays external; its JavaScript and abstract-level's ~40 small CommonJS files
 * are bundled, which saves resolving and compiling each of them on every run.
 */
const levelBinding = {
  name: "level-binding",
  setup(build) {
    build.onResolve({ filter: /^\.\/binding(\.js)?$/ }, (args) =>
      /[\\/]node_modules[\\/]classic-level[\\/]/.test(args.importer) ? { path: "classic-level/binding.js", external: true } : undefined,
    );
  },
};

// Built aside and swapped in, so a keen started meanwhile (tests, another build) never finds dist/ half-written.
const dist = new URL("../dist", import.meta.url);
const staging = new URL(`../dist.tmp-${process.pid}`, import.meta.url);
rmSync(staging, { recursive: true, force: true });
await build({
  entryPoints: { keen: "app/cli/entry.ts" },
  outdir: fileURLToPath(staging),
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  minify: true,
  sourcemap: "linked",
  plugins: [levelBinding],
  define: { KEEN_VERSION: JSON.stringify(pkg.version) },
  banner: { js: "import { createRequire as __keenCreateRequire } from 'node:module'; const require = __keenCreateRequire(import.meta.url);" },
  logLevel: "warning",
});
rmSync(dist, { recursive: true, force: true });
renameSync(staging, dist);
