import { traceStartup } from "../startup-trace.js";
import { baselineWasmOnly, loadNodeFetch } from "../wasm-flags.js";
import { httpFetch, httpFetchable } from "./http-fetch.js";
import { hasPreconnect, providerAgent, warmDispatcher } from "./preconnect.js";

/** The fetch signature both SDKs accept. */
export type SdkFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

const PROXY_VARS = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"];

/**
 * A fetch for the SDKs that honours HTTPS_PROXY / HTTP_PROXY / NO_PROXY.
 * Without a proxy variable the request goes over node:http / node:https (./http-fetch.ts: Node's own
 * fetch costs 21–30 ms to load at every start), through the agent that owns the early socket; a request
 * it does not make itself (a redirect, a body other than text or bytes) goes to Node's fetch. With one,
 * Node 20's global fetch would ignore it, so the request goes through undici's EnvHttpProxyAgent (undici
 * is loaded on first use: it costs startup time nobody without a proxy should pay). `web: true`: Node's
 * fetch even without a proxy, for a caller that reads the response as a web stream (a cassette's
 * recorder). Either way a request whose init carries `HOLD` is held.
 */
export function createFetch(env: NodeJS.ProcessEnv = process.env, options: { web?: boolean } = {}): SdkFetch {
  if (!hasProxyVars(env) && !options.web) {
    return (input, init) => {
      const hold = (init as Record<symbol, Promise<unknown> | undefined> | undefined)?.[HOLD];
      if (httpFetchable(input, init)) return httpFetch(input as string | URL, init, { agentFor: providerAgent, hold }) as unknown as Promise<Response>;
      loadNodeFetch();
      return fetchHeld(globalThis.fetch, input, init, undefined);
    };
  }
  if (!hasProxyVars(env)) {
    // Node loads its fetch implementation (undici, tens of ms) on the first call; loading it now instead runs
    // it while the caller still waits on other work (the store's disk I/O).
    loadNodeFetch();
    // With an early socket (app/providers/preconnect.ts) the requests go through the dispatcher that owns it.
    const dispatcher = (hasPreconnect() ? warmDispatcher() : undefined) as Dispatcher | undefined;
    return (input, init) => fetchHeld(globalThis.fetch, input, init, dispatcher);
  }
  let loading: Promise<{ fetch: SdkFetch; dispatcher: Dispatcher }> | undefined;
  const load = () =>
    (loading ??= loadUndici().then((undici) => ({
      // undici's own fetch, not the global one: the global fetch is a different
      // bundled undici whose dispatcher interface need not match this one.
      fetch: undici.fetch as unknown as SdkFetch,
      dispatcher: envProxyAgent(undici, env) as unknown as Dispatcher,
    })));
  return async (input, init) => {
    const { fetch, dispatcher } = await load();
    return fetchHeld(fetch, input, init, dispatcher);
  };
}

/**
 * A fetch init key: a promise the request's bytes wait for (ProviderRequest.notBefore). Both SDKs spread a
 * request's `fetchOptions` into the init they hand to fetch, so the key reaches `createFetch`'s fetch.
 */
export const HOLD = Symbol.for("keen.fetch.hold");

/** The SDK request options that hold `request` until its `notBefore` settles (the SDK spreads them into fetch's init). */
export function holdOptions(request: { notBefore?: Promise<unknown> }): { fetchOptions?: never } {
  // Opaque to the SDK's types: it only spreads the object into fetch's init.
  return request.notBefore ? { fetchOptions: { [HOLD]: request.notBefore } as never } : {};
}

/** The part of an undici dispatcher (Node's or npm's) that fetch calls. */
interface Dispatcher {
  dispatch(options: unknown, handler: unknown): boolean;
}

/** Node's global dispatcher, installed when its fetch loads; undefined where a Node version keeps it elsewhere. */
function globalDispatcher(): Dispatcher | undefined {
  const global = (globalThis as Record<symbol, unknown>)[Symbol.for("undici.globalDispatcher.1")] as Partial<Dispatcher> | undefined;
  return typeof global?.dispatch === "function" ? (global as Dispatcher) : undefined;
}

/**
 * `fetch` through `dispatcher` (undefined: the global one), a held request's dispatch deferred. Holding the
 * dispatch, not the call to fetch, lets fetch do all of its own work first (the Request, its headers and body, its
 * first call's compile: 8–36 ms on a loaded 2-core machine) while the caller waits for what the request must not
 * overtake; only the hand-over to a connection waits. A request aborted meanwhile is dropped by fetch when it is
 * dispatched, before a byte is written.
 */
function fetchHeld(fetch: SdkFetch, input: string | URL | Request, init: RequestInit | undefined, dispatcher: Dispatcher | undefined): Promise<Response> {
  const hold = (init as Record<symbol, Promise<unknown> | undefined> | undefined)?.[HOLD];
  const plain = () => fetch(input, (dispatcher ? { ...init, dispatcher } : init) as RequestInit);
  if (!hold) return plain();
  const target = dispatcher ?? globalDispatcher();
  // Without a dispatcher to wrap, the whole call waits.
  if (!target) return hold.then(plain, plain);
  const held: Dispatcher = {
    dispatch(options, handler) {
      traceStartup("request: built, held", true);
      const go = () => {
        traceStartup("request: released", true);
        target.dispatch(options, handler);
      };
      hold.then(go, go);
      return true;
    },
  };
  return fetch(input, { ...init, dispatcher: held } as RequestInit);
}

/** True when one of HTTPS_PROXY / HTTP_PROXY (either case) is set. */
export function hasProxyVars(env: NodeJS.ProcessEnv): boolean {
  return PROXY_VARS.some((name) => (env[name] ?? "").trim() !== "");
}

type Undici = Awaited<ReturnType<typeof loadUndici>>;

/** The undici package (its side bundle), loaded on first use, with Keen's WebAssembly flags set. */
export async function loadUndici() {
  const mod = await import("undici");
  // In the task that loaded it, before its parser's compile gets under way (app/wasm-flags.ts).
  baselineWasmOnly();
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
