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
  const proxied = PROXY_VARS.some((name) => (env[name] ?? "").trim() !== "");
  if (!proxied) return globalThis.fetch;
  let loading: Promise<{ fetch: SdkFetch; dispatcher: unknown }> | undefined;
  const load = () =>
    (loading ??= import("undici").then((undici) => ({
      // undici's own fetch, not the global one: the global fetch is a different
      // bundled undici whose dispatcher interface need not match this one.
      fetch: undici.fetch as unknown as SdkFetch,
      dispatcher: new undici.EnvHttpProxyAgent({
        httpProxy: env.HTTP_PROXY ?? env.http_proxy,
        httpsProxy: env.HTTPS_PROXY ?? env.https_proxy,
        noProxy: env.NO_PROXY ?? env.no_proxy,
      }),
    })));
  return async (input, init) => {
    const { fetch, dispatcher } = await load();
    return fetch(input, { ...init, dispatcher } as RequestInit);
  };
}
