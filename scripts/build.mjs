// Builds dist/: keen.cjs, one esbuild bundle of app/cli/entry.ts, and keen.blob,
// a V8 start-up snapshot of it (`node --build-snapshot`) that bin/keen starts
// from. See app/cli/entry.ts for what the snapshot holds and bin/keen for when
// it is used.
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, relative } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));

/**
 * classic-level's binding.js finds its native prebuild at run time
 * (`require('node-gyp-build')(__dirname)`: module resolution, two small files
 * and a directory scan), and a native addon cannot live in a snapshot. So
 * `./binding` becomes a stand-in that, on first use, dlopens the prebuild that
 * node-gyp-build picks here, by its path relative to dist/; if that file is
 * gone or does not load, it falls back to classic-level's own binding.js. The
 * rest of classic-level and abstract-level's ~40 small files are bundled.
 */
const levelRequire = createRequire(createRequire(import.meta.url).resolve("level"));
const classicLevelDir = dirname(levelRequire.resolve("classic-level/package.json"));
const prebuild = relative(fileURLToPath(new URL("../dist", import.meta.url)), levelRequire("node-gyp-build").resolve(classicLevelDir));
const levelBinding = {
  name: "level-binding",
  setup(build) {
    build.onResolve({ filter: /^\.\/binding(\.js)?$/ }, (args) =>
      /[\\/]node_modules[\\/]classic-level[\\/]/.test(args.importer) ? { path: "level-binding", namespace: "keen" } : undefined,
    );
    build.onLoad({ filter: /^level-binding$/, namespace: "keen" }, () => ({
      loader: "js",
      contents: `
        function load() {
          try {
            const module = { exports: {} };
            process.dlopen(module, require("node:path").join(__keenDist(), ${JSON.stringify(prebuild)}));
            return module.exports;
          } catch {
            return require("node:module").createRequire(__keenImportMeta.url)("classic-level/binding.js");
          }
        }
        let binding;
        module.exports = new Proxy({}, { get: (_, key) => (binding ??= load())[key] });
      `,
    }));
  },
};

/**
 * Where the bundle is at run time. Started from the snapshot, __filename is
 * where the bundle was built, and `require` only loads node's built-ins; the
 * blob's own path says where dist/ is now. Bundled ESM that asks for
 * `import.meta.url` (fdir's createRequire) gets that place too.
 */
const RUNTIME_PATHS = `"use strict";
var __keenDist = () => {
  const i = process.execArgv.indexOf("--snapshot-blob");
  return require("node:path").dirname(i >= 0 ? require("node:path").resolve(process.execArgv[i + 1]) : __filename);
};
var __keenImportMeta = { get url() { return require("node:url").pathToFileURL(require("node:path").join(__keenDist(), "keen.cjs")).href; } };
var require = ((builtin) => (id) => (id.startsWith("./") ? builtin("node:module").createRequire(__keenImportMeta.url)(id) : builtin(id)))(require);
`;

/**
 * Libraries only one feature loads (undici: an HTTP proxy; ajv: --output-schema;
 * the ACP SDK: `keen acp`) are bundles of their own beside keen.cjs, required on
 * first use, so their code (~0.5 MB of the 1.2 MB) is neither in the snapshot
 * nor parsed by a run that does not use them. Keys are the import specifiers,
 * values the bundle's file name in dist/ (without `.cjs`).
 */
const SIDE_BUNDLES = { undici: "undici", ajv: "ajv", "@agentclientprotocol/sdk": "acp-sdk" };
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const sideBundles = {
  name: "side-bundles",
  setup(build) {
    const specifiers = Object.keys(SIDE_BUNDLES).map(escape).join("|");
    const files = Object.values(SIDE_BUNDLES).map(escape).join("|");
    // `import("undici")` becomes a bundled stand-in whose require() of the side bundle runs on first use.
    build.onResolve({ filter: new RegExp(`^(${specifiers})$`) }, (args) => ({ path: SIDE_BUNDLES[args.path], namespace: "keen-side" }));
    build.onLoad({ filter: /.*/, namespace: "keen-side" }, (args) => ({ loader: "js", contents: `module.exports = require("./${args.path}.cjs");` }));
    build.onResolve({ filter: new RegExp(`^\\./(${files}|tui|mcp-sdk)\\.cjs$`) }, (args) => ({ path: args.path, external: true }));
  },
};
/**
 * The TUI (app/tui/start.ts with marked, marked-terminal and the highlighter)
 * is a side bundle too: `keen` alone loads it, no other command parses it.
 * blessed stays outside every bundle: it requires its widgets by computed
 * names and reads its terminfo files from its own directory, so it is
 * required from node_modules at run time.
 */
const tuiBundle = {
  name: "tui-bundle",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/tui\/start\.js$/ }, () => ({ path: "tui", namespace: "keen-side" }));
  },
};
/**
 * The MCP SDK's client (app/mcp/sdk.ts re-exports what Keen uses) is a side
 * bundle too: a session loads it only when it has an MCP server to start.
 */
const mcpSdkBundle = {
  name: "mcp-sdk-bundle",
  setup(build) {
    build.onResolve({ filter: /^\.\/sdk\.js$/ }, (args) =>
      /[\\/]app[\\/]mcp[\\/]/.test(args.importer) ? { path: "mcp-sdk", namespace: "keen-side" } : undefined,
    );
  },
};
/**
 * The sandbox library (@anthropic-ai/sandbox-runtime) is in no bundle: it finds its seccomp
 * helper and proxy agent next to its own files (import.meta.url), and only a sandboxed bash
 * call loads it. `import()` of it becomes a require of the package from node_modules
 * (Node 20.19+ requires ES modules), relative to dist/ so a snapshot start finds it too.
 */
const sandboxRuntime = {
  name: "sandbox-runtime",
  setup(build) {
    build.onResolve({ filter: /^@anthropic-ai\/sandbox-runtime$/ }, () => ({ path: "sandbox-runtime", namespace: "keen-external" }));
    build.onLoad({ filter: /.*/, namespace: "keen-external" }, () => ({
      loader: "js",
      contents: `module.exports = require("node:module").createRequire(__keenImportMeta.url)("@anthropic-ai/sandbox-runtime");`,
    }));
  },
};
const common = { bundle: true, format: "cjs", platform: "node", target: "node20", minify: true, logLevel: "warning" };

// Built aside and swapped in, so a keen started meanwhile (tests, another build) never finds dist/ half-written.
const dist = new URL("../dist", import.meta.url);
const staging = new URL(`../dist.tmp-${process.pid}`, import.meta.url);
const stagingDir = fileURLToPath(staging);
rmSync(staging, { recursive: true, force: true });
await build({
  ...common,
  entryPoints: { keen: "app/cli/entry.ts" },
  outdir: stagingDir,
  outExtension: { ".js": ".cjs" },
  sourcemap: "linked",
  plugins: [levelBinding, sideBundles, tuiBundle, mcpSdkBundle, sandboxRuntime],
  define: { KEEN_VERSION: JSON.stringify(pkg.version), "import.meta": "__keenImportMeta" },
  banner: { js: RUNTIME_PATHS },
});
const sideEntries = Object.fromEntries(Object.entries(SIDE_BUNDLES).map(([specifier, file]) => [file, specifier]));
await build({ ...common, entryPoints: sideEntries, outdir: stagingDir, outExtension: { ".js": ".cjs" } });
await build({ ...common, entryPoints: { "mcp-sdk": "app/mcp/sdk.ts" }, outdir: stagingDir, outExtension: { ".js": ".cjs" } });
await build({ ...common, entryPoints: { tui: "app/tui/start.ts" }, outdir: stagingDir, outExtension: { ".js": ".cjs" }, external: ["blessed"] });
// The CLI runner's permission relay: an MCP stdio server that claude spawns (with this node) in ask mode.
await build({ ...common, entryPoints: { "permission-relay": "app/agent/permission-relay-server.ts" }, outdir: stagingDir, outExtension: { ".js": ".cjs" } });
// The demo cassette ships beside the bundle: app/cli/demo.ts finds it next to the bundle's import.meta.url.
const demo = new URL("../app/cli/demo.cassette.jsonl", import.meta.url);
if (existsSync(demo)) copyFileSync(demo, `${stagingDir}/demo.cassette.jsonl`);
else process.stderr.write("keen build: app/cli/demo.cassette.jsonl is missing (npm run demo:record makes it); --replay demo will not work\n");
// The search worker's thread entry (app/tools/search-runner.ts starts it): tinyglobby and the regex search,
// run where a pattern that backtracks forever can be stopped. A worker is not started from the snapshot,
// so __filename is where it really is, and fdir's import.meta.url can come from it.
await build({
  ...common,
  entryPoints: { "search-worker": "app/tools/search-worker.ts" },
  outdir: stagingDir,
  outExtension: { ".js": ".cjs" },
  define: { "import.meta.url": "__keenWorkerUrl" },
  banner: { js: `"use strict";\nvar __keenWorkerUrl = require("node:url").pathToFileURL(__filename).href;` },
});
try {
  buildSnapshot();
} catch (error) {
  // Keen works without the blob (bin/keen then runs keen.cjs as a plain script), only slower to start.
  rmSync(`${stagingDir}/keen.blob`, { force: true });
  process.stderr.write(`keen build: no start-up snapshot (${String(error.stderr || error.message).trim()}); bin/keen will start slower\n`);
}
rmSync(dist, { recursive: true, force: true });
renameSync(staging, dist);

function buildSnapshot() {
  execFileSync(process.execPath, ["--snapshot-blob", `${stagingDir}/keen.blob`, "--build-snapshot", `${stagingDir}/keen.cjs`], {
    stdio: ["ignore", "inherit", "pipe"],
  });
  // A blob loads only into the node binary that built it. bin/keen checks that
  // with shell builtins alone (no process to spawn): `node` on PATH must be the
  // file this symlink names, and still carry the modification time copied here.
  symlinkSync(process.execPath, `${stagingDir}/blob-node`);
  writeFileSync(`${stagingDir}/blob-node.mtime`, `the mtime of ${process.execPath} (${process.version}) when keen.blob was built\n`);
  execFileSync("touch", ["-r", process.execPath, `${stagingDir}/blob-node.mtime`], { stdio: ["ignore", "ignore", "pipe"] });
  if (statSync(`${stagingDir}/blob-node.mtime`, { bigint: true }).mtimeNs !== statSync(process.execPath, { bigint: true }).mtimeNs) {
    throw new Error("could not copy the node binary's mtime to dist/blob-node.mtime");
  }
}

