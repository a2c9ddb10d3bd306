import { setFlagsFromString } from "node:v8";

/** V8's defaults for the two flags, and Keen's. */
const WASM_DEFAULTS = ["--wasm-tier-up", "--wasm-dynamic-tiering"];
const WASM_BASELINE = ["--no-wasm-tier-up", "--no-wasm-dynamic-tiering"];

/**
 * On globalThis once the flags are on. dist/start.cjs compiles and caches Keen's bundles, and the bundle's
 * `require` (scripts/build.mjs) loads Node's built-ins, inside `withDefaults`.
 */
export const WASM_FLAGS = Symbol.for("keen.wasmFlags");

/**
 * Keen's fetches (Node's own, for an MCP server over HTTP, a redirect or a cassette's recorder, and npm undici's
 * for a proxy and web_fetch) parse HTTP with llhttp compiled to WebAssembly; a provider's requests without a
 * proxy go over node:http (app/providers/http-fetch.ts), whose llhttp is native, and need none of this. Once the parser runs hot, V8 recompiles it with TurboFan on a background thread, and process exit
 * waits for that compile (~90–100 ms on a 2-core machine) although a run never needs the faster code: Liftoff's
 * baseline code parses SSE quickly enough. With these flags V8 compiles Liftoff code only.
 *
 * When: an undici starts compiling its parser (`WebAssembly.compile`) as it loads, and V8 reads the flags when
 * that compile gets under way, in a later task. So each caller sets them right after loading an undici, in the
 * same task: `loadNodeFetch()` for Node's; after `loadUndici()` for npm's. Set any later, the parser tiers up
 * (test/build/startup-path.test.ts watches V8's own record of the compiles).
 *
 * Not earlier: V8 refuses a code cache written under other flags, and Node's own modules (fetch's undici, net,
 * tls, …) load from caches written under the defaults; set at start, they made every built-in loaded afterwards
 * compile from source (Node's fetch: ~25 → ~45–65 ms on Node 20, ~28 → ~66 ms on Node 24). After it, code that
 * loads modules turns the defaults back on for the while (`withDefaults`): no wasm runs inside a synchronous load.
 */
export function baselineWasmOnly(): void {
  const global = globalThis as Record<symbol, unknown>;
  if (global[WASM_FLAGS]) return;
  const set = (flags: string[]) => {
    for (const flag of flags) setFlagsFromString(flag);
  };
  set(WASM_BASELINE);
  let depth = 0;
  global[WASM_FLAGS] = {
    withDefaults<T>(work: () => T): T {
      if (depth++ === 0) set(WASM_DEFAULTS);
      try {
        return work();
      } finally {
        if (--depth === 0) set(WASM_BASELINE);
      }
    },
  };
}

/** Loads Node's fetch (its undici, behind lazy globals) now, and sets the flags before its parser compiles. */
export function loadNodeFetch(): void {
  void globalThis.Headers;
  baselineWasmOnly();
}
