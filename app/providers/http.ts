import { setFlagsFromString } from "node:v8";
import { hasPreconnect, warmDispatcher } from "./preconnect.js";

/** The fetch signature both SDKs accept. */
export type SdkFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

const PROXY_VARS = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"];

/**
 * A fetch for the SDKs that honours HTTPS_PROXY / HTTP_PROXY / NO_PROXY.
 * Node 20's global fetch ignores those variables, so when one is set the
 * request goes through undici's EnvHttpProxyAgent (undici is loaded on first
 * use: it costs startup time nobody without a proxy should pay). Without a
 * proxy variable this is the plain global fetch.
 */
export function createFetch(env: NodeJS.ProcessEnv = process.env): SdkFetch {
  baselineWasmOnly();
  if (!hasProxyVars(env)) {
    // Node loads its fetch implementation (undici, tens of ms) on the first call; touching one of
    // its lazy globals loads it now instead, while the caller still waits on other work (the store's disk I/O).
    void globalThis.Headers;
    // With an early socket (app/providers/preconnect.ts) the requests go through the dispatcher that owns it.
    const dispatcher = hasPreconnect() ? warmDispatcher() : undefined;
    if (dispatcher) return (input, init) => globalThis.fetch(input, { ...init, dispatcher } as RequestInit);
    return globalThis.fetch;
  }
  let loading: Promise<{ fetch: SdkFetch; dispatcher: unknown }> | undefined;
  const load = () =>
    (loading ??= loadUndici().then((undici) => ({
      // undici's own fetch, not the global one: the global fetch is a different
      // bundled undici whose dispatcher interface need not match this one.
      fetch: undici.fetch as unknown as SdkFetch,
      dispatcher: envProxyAgent(undici, env),
    })));
  return async (input, init) => {
    const { fetch, dispatcher } = await load();
    return fetch(input, { ...init, dispatcher } as RequestInit);
  };
}

/** True when one of HTTPS_PROXY / HTTP_PROXY (either case) is set. */
export function hasProxyVars(env: NodeJS.ProcessEnv): boolean {
  return PROXY_VARS.some((name) => (env[name] ?? "").trim() !== "");
}

type Undici = Awaited<ReturnType<typeof loadUndici>>;

/** The undici package (its side bundle), loaded on first use. */
export async function loadUndici() {
  const mod = await import("undici");
  // Bundled by esbuild, undici (CommonJS) arrives as the default export only.
  return mod.EnvHttpProxyAgent ? mod : (mod as unknown as { default: typeof mod }).default;
}

/**
 * undici's EnvHttpProxyAgent for `env`'s HTTPS_PROXY / HTTP_PROXY / NO_PROXY. `options` go to
 * its agents (web_fetch passes a `connect.lookup`: it applies to the hosts reached directly,
 * NO_PROXY's; a proxy's tunnel makes its own connection).
 */
export function envProxyAgent(undici: Undici, env: NodeJS.ProcessEnv, options: ConstructorParameters<Undici["Agent"]>[0] = {}) {
  return withoutExperimentalWarning(() => new undici.EnvHttpProxyAgent({
    ...options,
    httpProxy: env.HTTP_PROXY ?? env.http_proxy,
    httpsProxy: env.HTTPS_PROXY ?? env.https_proxy,
    noProxy: env.NO_PROXY ?? env.no_proxy,
  }));
}

/**
 * Runs `build` with undici's "EnvHttpProxyAgent is experimental" warning
 * (code UNDICI-EHPA) silenced: it means nothing to a Keen user and would land
 * on stderr in the middle of a run. Every other warning still goes through.
 */
function withoutExperimentalWarning<T>(build: () => T): T {
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const options = rest[0] as { code?: string } | string | undefined;
    const code = typeof options === "object" ? options?.code : rest[1];
    if (code === "UNDICI-EHPA") return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return build();
  } finally {
    process.emitWarning = emitWarning;
  }
}

/**
 * Both fetches parse HTTP with llhttp compiled to WebAssembly. Once the parser
 * runs hot, V8 recompiles it with TurboFan on a background thread, and process
 * exit waits for that compile (~100 ms on a 2-core machine) although a run
 * never needs the faster code: Liftoff's baseline code parses SSE quickly
 * enough. Wasm flags are read when a module compiles, and no fetch has run
 * before a client is built, so setting them here takes effect.
 */
function baselineWasmOnly(): void {
  setFlagsFromString("--no-wasm-tier-up");
  setFlagsFromString("--no-wasm-dynamic-tiering");
}
