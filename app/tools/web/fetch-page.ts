import { lookup } from "node:dns/promises";
import { envProxyAgent, hasProxyVars, loadUndici } from "../../providers/http.js";
import { checkedLookup, hostOf, listStanding, refusedAddress, RefusedAddressError, type HostLists } from "./hosts.js";

/** How many redirects one fetch follows (within the rules below). */
export const MAX_REDIRECTS = 5;

export interface FetchLimits {
  lists: HostLists;
  /** For HTTPS_PROXY / HTTP_PROXY / NO_PROXY. */
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Bytes read from the body at most (after decompression); the rest is never read. */
  maxBytes: number;
  signal: AbortSignal;
  userAgent: string;
}

/** What came back: a body, or a redirect to another host that was not followed. */
export interface FetchedPage {
  /** The URL the body came from (after redirects within the host). */
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
  /** The body was longer than `maxBytes`: only that much was read. */
  truncated: boolean;
  /** Set when the server redirected to another host, which the rules did not let the fetch follow. */
  redirectedTo?: string;
}

/**
 * Why a URL may not be fetched as it is (scheme, deny list, an off-limits address written
 * into it), or undefined. Names are checked when they resolve (checkedLookup).
 */
export function urlRefusal(url: URL, lists: HostLists): string | undefined {
  if (url.protocol !== "http:" && url.protocol !== "https:") return `web_fetch fetches http and https URLs only, not ${url.protocol}`;
  if (url.username || url.password) return "web_fetch does not send credentials written into a URL";
  const standing = listStanding(lists, url);
  if (standing.denied) return `${hostOf(url)} is in web.deniedDomains of the user's Keen config`;
  const host = hostOf(url);
  const range = !standing.explicit ? refusedAddress(host) : undefined;
  if (range && range !== "not an IP address") return new RefusedAddressError(host, host, range).message;
  return undefined;
}

/**
 * A redirect is followed to the same host (another path, http to https) or to a host the
 * config's lists allow; to any other host it is not, and the model hears where it points,
 * so that fetching it goes through the permission flow for that host.
 */
export function followsRedirect(from: URL, to: URL, lists: HostLists): boolean {
  return hostOf(from) === hostOf(to) || listStanding(lists, to).allowed;
}

/**
 * GETs `start`, following redirects by the rule above, every hop checked by `urlRefusal`
 * and connected through `checkedLookup` (unless its host is named in the allow lists).
 * Throws with a message for the model.
 */
export async function fetchPage(start: URL, limits: FetchLimits): Promise<FetchedPage> {
  const undici = await loadUndici();
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const signal = AbortSignal.any([limits.signal, timeout]);
  let url = start;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const refusal = urlRefusal(url, limits.lists);
    if (refusal) throw new Error(refusal);
    const explicit = listStanding(limits.lists, url).explicit;
    const proxied = hasProxyVars(limits.env);
    // Through a proxy, the proxy resolves the name: it is checked here too, as far as local DNS can say.
    if (proxied && !explicit) await checkThroughLocalDns(hostOf(url));
    const connect = explicit ? {} : { connect: { lookup: checkedLookup() } };
    const dispatcher = proxied ? envProxyAgent(undici, limits.env, connect) : new undici.Agent(connect);
    try {
      const response = await undici.fetch(url, {
        dispatcher, signal, redirect: "manual",
        headers: { "user-agent": limits.userAgent, accept: "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.5" },
      });
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel();
        const next = new URL(location, url);
        if (!followsRedirect(url, next, limits.lists)) {
          return { url: url.href, status: response.status, contentType: "", body: Buffer.alloc(0), truncated: false, redirectedTo: next.href };
        }
        url = next;
        continue;
      }
      const { body, truncated } = await readCapped(response.body, limits.maxBytes);
      return { url: url.href, status: response.status, contentType: response.headers.get("content-type") ?? "", body, truncated };
    } catch (error) {
      if (timeout.aborted && !limits.signal.aborted) throw new Error(`no complete answer from ${hostOf(url)} within ${limits.timeoutMs / 1000} s`);
      throw plainError(error);
    } finally {
      void dispatcher.destroy().catch(() => {});
    }
  }
  throw new Error(`more than ${MAX_REDIRECTS} redirects`);
}

/**
 * Refuses a name that resolves to an off-limits address before anybody is asked about it
 * (unless the lists name it). Only a courtesy: the check that counts is where the socket connects.
 */
export async function preflight(url: URL, lists: HostLists): Promise<void> {
  if (!listStanding(lists, url).explicit) await checkThroughLocalDns(hostOf(url));
}

async function checkThroughLocalDns(host: string): Promise<void> {
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true });
  } catch {
    return; // Not resolvable here: only the proxy knows it.
  }
  for (const { address } of addresses) {
    const range = refusedAddress(address);
    if (range) throw new RefusedAddressError(host, address, range);
  }
}

/** The body's first `max` bytes, and whether there was more (which is then not read). */
async function readCapped(stream: { getReader(): ReadableStreamDefaultReader<Uint8Array> } | null, max: number): Promise<{ body: Buffer; truncated: boolean }> {
  if (!stream) return { body: Buffer.alloc(0), truncated: false };
  const reader = stream.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { body: Buffer.concat(chunks), truncated: false };
    chunks.push(Buffer.from(value));
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return { body: Buffer.concat(chunks).subarray(0, max), truncated: true };
    }
  }
}

/** undici's "fetch failed" with the cause that says what failed (a refused address, ECONNREFUSED, ENOTFOUND). */
function plainError(error: unknown): Error {
  let current: unknown = error;
  while (current instanceof Error) {
    if (current instanceof RefusedAddressError) return current;
    const cause: unknown = (current as { cause?: unknown }).cause;
    if (!(cause instanceof Error)) break;
    current = cause;
  }
  const message = current instanceof Error ? current.message : String(current);
  return new Error(message === "fetch failed" ? "the request failed" : message);
}
