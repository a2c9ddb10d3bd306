"use strict";
// bin/keen's way into the plain bundle: runs dist/keen.cjs as `node dist/keen.cjs` would, but with a
// V8 code cache. Compiling the ~1 MB bundle (pre-parsing every function) is most of what a start
// of the program costs beyond `node -e 0`; V8 can instead deserialise the compiled code from a
// cache written by an earlier start. The build copies this file into dist/ with the bundle's hash,
// its version and its help text in place of the placeholders below.
//
// The cache is dist/code-cache/<node version>-<arch>-<build id>.bin, written once, at the exit of
// the first start that found none (so it holds what that command compiled), atomically (a temp
// file renamed). V8 checks it against its own version, flags and the source's length and refuses
// a mismatch; the build id in the name makes a cache of another bundle of the same length
// unreachable. A refused cache is neither used nor rewritten (rewriting at every exit would cost
// more than it saves). Where dist/ is not writable there is no cache, only the compile as before.
// KEEN_CODE_CACHE=off compiles without one. Dependency-free: it ships in the package.
//
// Its shortcut: `keen --version` / `-V`, and `keen --help` / `-h` when stdout is not a terminal,
// need nothing of the program, so they are answered here with what the build baked in (the build
// runs the bundle it has just made with those flags, so the text is the program's own), and
// keen.cjs is neither read nor compiled. Only these exact argv: anything else, even
// `--version extra`, goes to the program. At a terminal commander wraps help to its width, which a
// baked text cannot know. KEEN_SHORTCUT=off turns it off (dist/snapshot.mjs times the program's
// start with `--version`).
if (process.argv.length === 3 && process.env.KEEN_SHORTCUT !== "off") {
  const flag = process.argv[2];
  const text =
    flag === "--version" || flag === "-V" ? "__KEEN_VERSION__"
    : (flag === "--help" || flag === "-h") && !require("node:tty").isatty(1) ? "__KEEN_HELP__"
    : undefined;
  if (text !== undefined) {
    // As the program: a closed stdout (`keen --version | true`) is not an error.
    process.stdout.on("error", () => {});
    process.stdout.write(text);
    return;
  }
}
const { accessSync, constants, existsSync, linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } = require("node:fs");
const { dirname, join } = require("node:path");
const Module = require("node:module");
const vm = require("node:vm");

// V8 refuses a code cache written under other flags, Node's own built-in modules' included. Keen sets
// two WebAssembly flags once its fetch has loaded (app/wasm-flags.ts); from then on it puts on
// globalThis, under this key, a way to run code with V8's defaults back on for the while. Caches are
// read and written, and side bundles evaluated (their top levels require built-ins), inside it.
const v8Defaults = (work) => {
  const flags = globalThis[Symbol.for("keen.wasmFlags")];
  return flags ? flags.withDefaults(work) : work();
};

const useCache = process.env.KEEN_CODE_CACHE !== "off";
// KEEN_CODE_CACHE=warm (scripts/snapshot.mjs sets it): the bundle compiles what a run needs and exits; the cache written then replaces any other.
const warming = process.env.KEEN_CODE_CACHE === "warm";
// Serialising the cache costs CPU at exit: only where it can be written (a global install owned by another user cannot).
const writable = (dir) => {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
};

/**
 * `file` compiled with its cache when there is one (and V8 takes it). Without one, `save` writes it: at
 * exit for keen.cjs (so it holds what the start compiled lazily too), at once for a side bundle.
 */
function compile(file, id, saveAtExit = true) {
  const cacheFile = join(__dirname, "code-cache", `${process.version}-${process.arch}-${id}.bin`);
  let cachedData;
  if (useCache) {
    try {
      if (!warming) cachedData = readFileSync(cacheFile);
    } catch {}
  }
  const source = Module.wrap(readFileSync(file, "utf8"));
  const script = v8Defaults(() => new vm.Script(source, {
    filename: file,
    cachedData,
    importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  }));
  if (useCache && !cachedData && writable(existsSync(dirname(cacheFile)) ? dirname(cacheFile) : __dirname)) {
    const save = () => {
      try {
        mkdirSync(dirname(cacheFile), { recursive: true });
        const temp = `${cacheFile}.tmp-${process.pid}`;
        writeFileSync(temp, v8Defaults(() => script.createCachedData()));
        // A warmed cache replaces any other; a start's own never replaces one written meanwhile (link fails if it exists).
        if (warming) renameSync(temp, cacheFile);
        else {
          try {
            linkSync(temp, cacheFile);
          } finally {
            unlinkSync(temp);
          }
        }
      } catch {}
    };
    if (saveAtExit) process.once("exit", save);
    else return { script, save };
  }
  return { script, save: () => {} };
}

// What Keen requires from node_modules at run time rather than from a bundle (blessed, with the ~50 files it
// requires by computed names) compiles from source at every start. Node 22.1+ keeps V8 code caches of such
// modules itself (module.enableCompileCache): the TUI's first frame on Node 24, 210 → 169 ms. Node 20 has no
// such cache; nothing changes there.
if (useCache && typeof Module.enableCompileCache === "function" && writable(__dirname)) {
  try {
    Module.enableCompileCache(join(__dirname, "code-cache", "modules"));
  } catch {}
}
// The side bundles (the TUI with its markdown, the MCP SDK, the sandbox library, …: scripts/build.mjs) are
// required on first use, each ~0.4–1.7 MB: compiling one is 50–80 ms of the first frame or the first
// sandboxed command. The bundle's stand-in for a side bundle asks here first (a snapshot start has no
// start.cjs and requires the file as before), and each gets a cache of its own, named by its own hash.
const sideIds = "__KEEN_SIDE_IDS__";
globalThis[Symbol.for("keen.requireSide")] = (name) => {
  const file = join(__dirname, `${name}.cjs`);
  const cached = Module._cache[file];
  if (cached) return cached.exports;
  const id = sideIds[name];
  if (!id) return require(file);
  const mod = new Module(file, null);
  mod.filename = file;
  mod.paths = Module._nodeModulePaths(__dirname);
  // In require's cache before it runs, as require does: a cycle, or a plain require of it later, gets this one.
  Module._cache[file] = mod;
  try {
    const { script, save } = compile(file, `${name}-${id}`, false);
    v8Defaults(() => script.runInThisContext()(mod.exports, Module.createRequire(file), mod, file, __dirname));
    // Right after its top level ran: a cache of everything a whole TUI session compiled (2 MB) took as long
    // to read as the compile it saves; the top level's (~0.1 MB) halves the load (78 → 36 ms, Node 20).
    save();
  } catch (error) {
    delete Module._cache[file];
    throw error;
  }
  mod.loaded = true;
  return mod.exports;
};

// The bundle sees itself as the main script, as `node dist/keen.cjs` would show it.
const bundle = join(__dirname, "keen.cjs");
const { script } = compile(bundle, "__KEEN_BUILD_ID__");
const main = new Module(bundle, null);
main.filename = bundle;
main.paths = Module._nodeModulePaths(__dirname);
process.argv[1] = bundle;
script.runInThisContext()(main.exports, Module.createRequire(bundle), main, bundle, __dirname);
