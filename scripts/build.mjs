// Builds dist/: keen.cjs, one esbuild bundle of app/cli/entry.ts, its side
// bundles, and — where it starts faster than the plain bundle on this machine —
// keen.blob, a V8 start-up snapshot of it (`node --build-snapshot`; the choice
// is scripts/snapshot.mjs's). See app/cli/entry.ts for what the snapshot holds
// and bin/keen for when it is used.
//
// npm runs it as `prepare` (npm install / npm ci in a checkout) and as `prepack`
// (npm pack / publish). package.json's prepare skips it under pack and publish,
// where prepack has just built, and wherever this file is absent: an installed
// package has no scripts/ and no esbuild, and must never try to build.
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { decideStartup, MEASURED } from "./snapshot.mjs";
import { toolSchemas } from "./tool-schemas.mjs";

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
var require = ((builtin) => (id) => (id.startsWith("./") ? builtin("node:module").createRequire(__keenImportMeta.url)(id) : __keenLazy(builtin, id)))(require);
`
/**
 * Node built-ins that a run's start imports (commander needs child_process for executable subcommands; the tools
 * import them at their top) but does not call before its first request: each is a stand-in that requires the module
 * at its first use (child_process with the dgram it requires, readline: ~8 ms of CPU at every start; v8, ~2 ms, which
 * a start that makes no model request never needs: app/wasm-flags.ts sets two flags with it). Every operation
 * on the stand-in is the module's. test/build/startup-path.test.ts checks what a run has loaded at its request.
 */
  + `var __keenLazy = ((lazy, made) => (builtin, id) => {
  // Once Keen has set its WebAssembly flags (app/wasm-flags.ts), a built-in loads with V8's defaults
  // back on: Node's code cache of the module is refused under other flags.
  const load = () => {
    const flags = globalThis[Symbol.for("keen.wasmFlags")];
    return flags ? flags.withDefaults(() => builtin(id)) : builtin(id);
  };
  const name = id.replace(/^node:/, "");
  if (!lazy.includes(name)) return load();
  if (made[name]) return made[name];
  let module;
  const real = () => (module ??= load());
  return (made[name] = new Proxy({}, {
    get: (_, key) => real()[key],
    set: (_, key, value) => Reflect.set(real(), key, value),
    has: (_, key) => key in real(),
    ownKeys: () => Reflect.ownKeys(real()),
    // The stand-in's own (empty, extensible) target allows no property that cannot be configured.
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
    defineProperty: (_, key, descriptor) => Reflect.defineProperty(real(), key, descriptor),
    deleteProperty: (_, key) => Reflect.deleteProperty(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  }));
})(["child_process", "readline", "readline/promises", "v8"], Object.create(null));
`;

/**
 * Libraries only one feature loads (undici: an HTTP proxy; ajv: --output-schema;
 * the ACP SDK: `keen acp`; jimp: downscaling an image over the caps) are bundles of their own beside keen.cjs, required on
 * first use, so their code (~0.5 MB of the 1.2 MB) is neither in the snapshot
 * nor parsed by a run that does not use them. Keys are the import specifiers,
 * values the bundle's file name in dist/ (without `.cjs`).
 */
const SIDE_BUNDLES = { undici: "undici", ajv: "ajv", "@agentclientprotocol/sdk": "acp-sdk", jimp: "jimp" };
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
const sideBundles = {
  name: "side-bundles",
  setup(build) {
    const specifiers = Object.keys(SIDE_BUNDLES).map(escape).join("|");
    const files = Object.values(SIDE_BUNDLES).map(escape).join("|");
    // `import("undici")` becomes a bundled stand-in whose require() of the side bundle runs on first use.
    build.onResolve({ filter: new RegExp(`^(${specifiers})$`) }, (args) => ({ path: SIDE_BUNDLES[args.path], namespace: "keen-side" }));
    // Through start.cjs's loader when it started the bundle (each side bundle with a code cache of its own); else a plain require.
    build.onLoad({ filter: /.*/, namespace: "keen-side" }, (args) => ({
      loader: "js",
      contents: `const side = globalThis[Symbol.for("keen.requireSide")];\nmodule.exports = side ? side(${JSON.stringify(args.path)}) : require("./${args.path}.cjs");`,
    }));
    build.onResolve({ filter: new RegExp(`^\\./(${files}|tui|mcp-sdk|web-html|sandbox-runtime)\\.cjs$`) }, (args) => ({ path: args.path, external: true }));
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
 * web_fetch's HTML to markdown (app/tools/web/html.ts with linkedom, Readability and
 * turndown, ~0.4 MB) is a side bundle too: only a fetched HTML page loads it.
 */
const webHtmlBundle = {
  name: "web-html-bundle",
  setup(build) {
    build.onResolve({ filter: /^\.\/web\/html\.js$/ }, (args) =>
      /[\\/]app[\\/]tools[\\/]/.test(args.importer) ? { path: "web-html", namespace: "keen-side" } : undefined,
    );
  },
};
/**
 * zod is evaluated on first use, not at start: `import * as z from "zod"` in Keen's modules gets a
 * stand-in with one getter per export of zod (the names are read here, from the same zod), and the
 * first getter read requires the real zod, which esbuild then wraps to run only when required. A
 * text-only run reads no getter: its modules build their schemas on first use (app/lazy.ts) and a
 * config this build has checked before is not checked again (app/cli/config-check.ts). Loading zod
 * and building the run's schemas cost ~10 ms of CPU before the first request (docs/performance.md,
 * "Ninth pass"). With KEEN_TRACE_STARTUP set, the load is a trace line (test/build/startup-path.test.ts).
 */
/** Every file of Keen's own sources (app/, protocol/, storage/), relative to the checkout: read by lazy-zod and sourceId. */
const ROOT = new URL("..", import.meta.url);
const SOURCES = ["app", "protocol", "storage"].flatMap((dir) =>
  readdirSync(new URL(dir, ROOT), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(fileURLToPath(ROOT), `${entry.parentPath ?? entry.path}/${entry.name}`)),
);
const zodNames = usedZodNames(Object.keys(await import("zod")));
const lazyZod = {
  name: "lazy-zod",
  setup(build) {
    const resolveDir = fileURLToPath(new URL("..", import.meta.url));
    build.onResolve({ filter: /^zod$/ }, (args) => (args.namespace === "keen-lazy" ? undefined : { path: "zod", namespace: "keen-lazy" }));
    build.onResolve({ filter: /^keen-zod-used$/ }, () => ({ path: "zod-used", namespace: "keen-lazy" }));
    // Only the names Keen uses, as ESM: esbuild keeps the rest of zod (its 64 locales among them) out of the bundle.
    build.onLoad({ filter: /^zod-used$/, namespace: "keen-lazy" }, () => ({ loader: "js", resolveDir, contents: `export { ${zodNames.join(", ")} } from "zod";\n` }));
    build.onLoad({ filter: /^zod$/, namespace: "keen-lazy" }, () => ({
      loader: "js",
      resolveDir,
      contents: `let real;
const load = () => {
  if (real) return real;
  if (process.env.KEEN_TRACE_STARTUP) process.stderr.write("keen-trace " + performance.now().toFixed(1) + " zod loaded\\n");
  return (real = require("keen-zod-used"));
};
Object.defineProperty(exports, "__esModule", { value: true });
for (const name of ${JSON.stringify(zodNames)}) Object.defineProperty(exports, name, { enumerable: true, get: () => load()[name] });
`,
    }));
  },
};

/**
 * The names of zod's exports that Keen's sources read (`z.object`, `z.toJSONSchema`, …; every module imports
 * zod as `import * as z from "zod"`): the stand-in offers these, so a name used nowhere is neither bundled nor
 * offered. A module that imported zod another way would leave its names out: the build refuses it.
 */
function usedZodNames(exported) {
  const used = new Set();
  for (const file of SOURCES.filter((f) => /\.tsx?$/.test(f))) {
    const source = readFileSync(new URL(file, ROOT), "utf8");
    for (const match of source.matchAll(/from "zod(\/[^"]*)?"/g)) {
      const line = source.slice(source.lastIndexOf("\n", match.index) + 1, match.index);
      if (!/^import (type )?\* as z $/.test(line)) throw new Error(`${file}: import zod as \`import * as z from "zod"\` (scripts/build.mjs, lazy-zod)`);
    }
    for (const [, name] of source.matchAll(/\bz\.([A-Za-z_$][\w$]*)/g)) used.add(name);
  }
  return exported.filter((name) => used.has(name)).sort();
}
/**
 * Both SDKs touch the globals `Headers` (each request's headers) and `FormData` (`body instanceof FormData`),
 * and touching either loads all of Node's fetch (21–30 ms at every start), though Keen's requests go over
 * node:http (app/providers/http-fetch.ts). In the SDKs' modules those two names are bound to
 * app/providers/sdk-globals.ts instead; Node's globals are left alone for everything else. A module of theirs
 * that declares one of the names itself fails the build.
 */
const SDK_GLOBALS = fileURLToPath(new URL("../app/providers/sdk-globals.ts", import.meta.url));
const sdkGlobals = {
  name: "sdk-globals",
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/](@anthropic-ai[\\/]sdk|openai)[\\/].*\.mjs$/ }, (args) => {
      const source = readFileSync(args.path, "utf8");
      const bound = ["Headers", "FormData"].filter((name) => new RegExp(`(?<![\\w$.])${name}(?![\\w$])`).test(source));
      if (bound.length === 0) return undefined;
      return { loader: "js", contents: `import { ${bound.map((name) => `Sdk${name} as ${name}`).join(", ")} } from ${JSON.stringify(SDK_GLOBALS)};\n${source}` };
    });
  },
};
/**
 * The sandbox library (@anthropic-ai/sandbox-runtime, ESM with node-forge, zod 3 and commander)
 * is a side bundle, dist/sandbox-runtime.cjs: only a sandboxed command loads it, and one CJS file
 * loads in about half the CPU of the package's ~100 modules (Node 20: 93 ms instead of 174 ms).
 * `import()` of it becomes a require of that file, relative to dist/ so a snapshot start finds it too.
 */
const sandboxRuntime = {
  name: "sandbox-runtime",
  setup(build) {
    build.onResolve({ filter: /^@anthropic-ai\/sandbox-runtime$/ }, () => ({ path: "sandbox-runtime", namespace: "keen-side" }));
  },
};
/**
 * The library finds its seccomp helper (vendor/seccomp/<arch>/apply-seccomp), its JVM proxy agent
 * and its own install (the warning when a sandboxed command could write it) from `import.meta.url`,
 * and every file that asks is in its dist/sandbox/. So in the side bundle `import.meta.url` is that
 * directory's URL inside the installed package (a dependency of Keen's, beside dist/ at run time):
 * each of those look-ups means what it means unbundled. If the package cannot be resolved the URL is
 * the bundle's own, and the library looks there, finds no helper, and warns as it would.
 */
const SANDBOX_RUNTIME_URL = `"use strict";
var __keenSandboxUrl = (() => {
  const { dirname, join } = require("node:path");
  let dir;
  try {
    dir = join(dirname(require.resolve("@anthropic-ai/sandbox-runtime/package.json")), "dist", "sandbox");
  } catch {
    dir = __dirname;
  }
  return require("node:url").pathToFileURL(join(dir, "sandbox-manager.js")).href;
})();
`;
// KEEN_BUILD_MINIFY=0 keeps names and lines, for reading a CPU profile of a run (docs/performance.md).
// No `import()` left in a bundle (esbuild makes each a require in a promise): Node 20 loses the dynamic-import
// callback of a script compiled from a V8 code cache (start.cjs), so a kept `import("blessed")` failed there.
const common = {
  bundle: true, format: "cjs", platform: "node", target: "node20", minify: process.env.KEEN_BUILD_MINIFY !== "0", logLevel: "warning",
  supported: { "dynamic-import": false },
};

/**
 * What this build was made from: a hash of Keen's sources and the lockfile. The bundle gets it as
 * `__KEEN_SOURCE_ID__`, for records that hold only for the code that wrote them (app/cli/config-check.ts).
 */
function sourceId() {
  const hash = createHash("sha256");
  for (const file of ["package.json", "package-lock.json", ...SOURCES].sort()) {
    if (existsSync(new URL(file, ROOT))) hash.update(`${file}\0`).update(readFileSync(new URL(file, ROOT))).update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

// Built aside and swapped in, so a keen started meanwhile (tests, another build) never finds dist/ half-written.
const dist = new URL("../dist", import.meta.url);
const staging = new URL(`../dist.tmp-${process.pid}`, import.meta.url);
const stagingDir = fileURLToPath(staging);
rmSync(staging, { recursive: true, force: true });
mkdirSync(staging);
// The bundles are independent: esbuild builds them at once (one service, its own threads).
const builds = [];
// The tools' JSON Schemas go into the bundle, converted here (scripts/tool-schemas.mjs), not at each run's start.
builds.push(toolSchemas().then((schemas) => build({
  ...common,
  metafile: true,
  entryPoints: { keen: "app/cli/entry.ts" },
  outdir: stagingDir,
  outExtension: { ".js": ".cjs" },
  sourcemap: "linked",
  plugins: [levelBinding, sideBundles, tuiBundle, mcpSdkBundle, webHtmlBundle, sandboxRuntime, lazyZod, sdkGlobals],
  define: { KEEN_VERSION: JSON.stringify(pkg.version), "import.meta": "__keenImportMeta", __KEEN_TOOL_SCHEMAS__: JSON.stringify(JSON.stringify(schemas)), __KEEN_SOURCE_ID__: JSON.stringify(sourceId()) },
  banner: { js: RUNTIME_PATHS },
})));
const sideEntries = Object.fromEntries(Object.entries(SIDE_BUNDLES).map(([specifier, file]) => [file, specifier]));
builds.push(build({ ...common, entryPoints: sideEntries, outdir: stagingDir, outExtension: { ".js": ".cjs" } }));
builds.push(build({
  ...common,
  entryPoints: { "sandbox-runtime": "@anthropic-ai/sandbox-runtime" },
  plugins: [(await import("./sandbox-patches.mjs")).sandboxPatches()], // edits to the library that save work per command
  outdir: stagingDir,
  outExtension: { ".js": ".cjs" },
  define: { "import.meta.url": "__keenSandboxUrl" },
  banner: { js: SANDBOX_RUNTIME_URL },
}));
builds.push(build({ ...common, entryPoints: { "mcp-sdk": "app/mcp/sdk.ts" }, outdir: stagingDir, outExtension: { ".js": ".cjs" } }));
builds.push(build({ ...common, entryPoints: { "web-html": "app/tools/web/html.ts" }, outdir: stagingDir, outExtension: { ".js": ".cjs" } }));
builds.push(build({ ...common, entryPoints: { tui: "app/tui/start.ts" }, outdir: stagingDir, outExtension: { ".js": ".cjs" }, external: ["blessed"] }));
// The CLI runner's permission relay: an MCP stdio server that claude spawns (with this node) in ask mode.
builds.push(build({ ...common, entryPoints: { "permission-relay": "app/agent/permission-relay-server.ts" }, outdir: stagingDir, outExtension: { ".js": ".cjs" } }));
// The demo cassette ships beside the bundle: app/cli/demo.ts finds it next to the bundle's import.meta.url.
const demo = new URL("../app/cli/demo.cassette.jsonl", import.meta.url);
if (existsSync(demo)) copyFileSync(demo, `${stagingDir}/demo.cassette.jsonl`);
else process.stderr.write("keen build: app/cli/demo.cassette.jsonl is missing (npm run demo:record makes it); --replay demo will not work\n");
// The search worker's thread entry (app/tools/search-runner.ts starts it): tinyglobby and the regex search,
// run where a pattern that backtracks forever can be stopped. A worker is not started from the snapshot,
// so __filename is where it really is, and fdir's import.meta.url can come from it.
builds.push(build({
  ...common,
  entryPoints: { "search-worker": "app/tools/search-worker.ts" },
  outdir: stagingDir,
  outExtension: { ".js": ".cjs" },
  define: { "import.meta.url": "__keenWorkerUrl" },
  banner: { js: `"use strict";\nvar __keenWorkerUrl = require("node:url").pathToFileURL(__filename).href;` },
}));
const [main] = await Promise.all(builds);
// Which modules keen.cjs holds and how they import each other (static or `import()`), for
// test/build/startup-path.test.ts: what a start evaluates. Not shipped in the package.
writeFileSync(`${stagingDir}/keen.meta.json`, JSON.stringify(main.metafile.inputs));

// bin/keen starts the plain bundle through start.cjs, which keeps a V8 code cache of it; the cache's
// name carries the bundle's hash, so no cache of another build is ever read for this one.
const buildId = createHash("sha256").update(readFileSync(`${stagingDir}/keen.cjs`)).digest("hex").slice(0, 16);
// start.cjs answers `--version` and (off a terminal) `--help` itself: with the bytes this bundle prints for them.
const baked = (flag) => JSON.stringify(execFileSync(process.execPath, [`${stagingDir}/keen.cjs`, flag], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }));
let start = readFileSync(new URL("./start.cjs", import.meta.url), "utf8").replaceAll("__KEEN_BUILD_ID__", buildId);
for (const [placeholder, flag] of [["__KEEN_VERSION__", "--version"], ["__KEEN_HELP__", "--help"]]) {
  if (!start.includes(`"${placeholder}"`)) throw new Error(`scripts/start.cjs has no "${placeholder}" to fill in`);
  const text = baked(flag);
  start = start.replace(`"${placeholder}"`, () => text);
}
// Each side bundle's cache is named by that bundle's own hash (a TUI change must not meet the TUI cache of the build before).
const sideNames = [...Object.values(SIDE_BUNDLES), "tui", "mcp-sdk", "web-html", "sandbox-runtime"];
const sideIds = Object.fromEntries(sideNames.map((name) => [name, createHash("sha256").update(readFileSync(`${stagingDir}/${name}.cjs`)).digest("hex").slice(0, 16)]));
if (!start.includes(`"__KEEN_SIDE_IDS__"`)) throw new Error(`scripts/start.cjs has no "__KEEN_SIDE_IDS__" to fill in`);
start = start.replace(`"__KEEN_SIDE_IDS__"`, () => JSON.stringify(sideIds));
writeFileSync(`${stagingDir}/start.cjs`, start);
// Snapshot or plain bundle: measured here, for the node that builds (scripts/snapshot.mjs, shipped in dist/
// so that bin/keen can decide again in the background for another node or an installed package).
copyFileSync(new URL("./snapshot.mjs", import.meta.url), `${stagingDir}/snapshot.mjs`);
// `npm test` builds with KEEN_BUILD_REUSE_DECISION=1: a plain-bundle decision measured for this very node by an
// earlier build is kept without building a blob and timing both ways again (seconds of the test loop); the figures
// it rests on are carried over. A snapshot decision is always re-made (the blob must be rebuilt for this bundle).
const previous = (() => {
  try {
    return JSON.parse(readFileSync(new URL("../dist/startup.json", import.meta.url), "utf8"));
  } catch {
    return undefined;
  }
})();
const reuse = process.env.KEEN_BUILD_REUSE_DECISION === "1" && !process.env.KEEN_SNAPSHOT && previous?.chosen === "plain"
  && !previous.error && previous.node === process.execPath && previous.version === process.version && previous.snapshotMs
  && previous.measured === MEASURED;
const startup = reuse
  ? decideStartup(stagingDir, "off", { reusedFrom: previous.reusedFrom ?? previous.date, runs: previous.runs, measured: previous.measured, snapshotMs: previous.snapshotMs, plainMs: previous.plainMs })
  : decideStartup(stagingDir);
const figures = startup.snapshotMs
  ? ` (${startup.reusedFrom ? `as measured at ${startup.reusedFrom}: ` : ""}${startup.measured ?? "keen --version"}: snapshot ${startup.snapshotMs.toFixed(1)} ms, plain ${startup.plainMs.toFixed(1)} ms)`
  : "";
process.stderr.write(
  startup.error
    ? `keen build: no start-up snapshot (${startup.error}); bin/keen runs the plain bundle\n`
    : `keen build: starts from the ${startup.chosen === "snapshot" ? "snapshot" : "plain bundle"} with ${process.version}${figures}\n`,
);
rmSync(dist, { recursive: true, force: true });
renameSync(staging, dist);
