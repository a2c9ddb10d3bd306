import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import ipaddr from "ipaddr.js";

/**
 * Which hosts web_fetch may reach (docs/security.md, "web_fetch"). Patterns are the sandbox's
 * (`sandbox.network.allowedDomains`): `example.com`, `*.example.com` (any subdomain, not the
 * name itself), an address (`127.0.0.1`, `::1` or `[::1]`), each optionally with `:port`.
 */
export interface HostLists {
  /** `web.allowedDomains` and `sandbox.network.allowedDomains`: fetched without asking, in every mode. */
  allowed: string[];
  /** `web.deniedDomains`: never fetched, whatever else says. */
  denied: string[];
}

/** A URL's host as the lists and the permission rules name it: lower case, IPv6 without brackets. */
export function hostOf(url: URL): string {
  return url.hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
}

/** The URL's port, or undefined for its scheme's default. */
export function portOf(url: URL): number | undefined {
  return url.port ? Number(url.port) : undefined;
}

/** The port a URL connects to (its scheme's default when it names none). */
function effectivePort(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
}

/** `host[:port]`, as a permission rule names it (`web:<this>`). */
export function hostKey(url: URL): string {
  const host = hostOf(url);
  const port = portOf(url);
  const shown = host.includes(":") ? `[${host}]` : host;
  return port === undefined ? shown : `${shown}:${port}`;
}

/** Splits a pattern into host and port (`[::1]:8080`, `::1`, `a.com:443`, `*.a.com`). */
function parsePattern(pattern: string): { host: string; port?: number } {
  const text = pattern.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  if (bracketed) return { host: bracketed[1]!, ...(bracketed[2] ? { port: Number(bracketed[2]) } : {}) };
  // More than one colon and no brackets: a bare IPv6 address, no port.
  if (text.indexOf(":") !== text.lastIndexOf(":")) return { host: text };
  const [host, port] = text.split(":");
  return { host: host!.replace(/\.$/, ""), ...(port && /^\d+$/.test(port) ? { port: Number(port) } : {}) };
}

/** True when `pattern` names `url`'s host (and port, when the pattern has one). */
export function matchesPattern(pattern: string, url: URL): boolean {
  const { host, port } = parsePattern(pattern);
  if (port !== undefined && port !== effectivePort(url)) return false;
  const name = hostOf(url);
  if (host === "*") return true;
  if (host.startsWith("*.")) return name.endsWith(host.slice(1));
  if (ipaddr.isValid(host) && ipaddr.isValid(name)) return ipaddr.process(host).toString() === ipaddr.process(name).toString();
  return host === name;
}

/** How a URL's host stands with the lists: denied wins; `explicit` means named (not by a bare `*`). */
export function listStanding(lists: HostLists, url: URL): { denied: boolean; allowed: boolean; explicit: boolean } {
  const denied = lists.denied.some((p) => matchesPattern(p, url));
  const hits = lists.allowed.filter((p) => matchesPattern(p, url));
  return { denied, allowed: !denied && hits.length > 0, explicit: !denied && hits.some((p) => parsePattern(p).host !== "*") };
}

/**
 * Why an address is off limits, or undefined for a public unicast one. Everything but
 * ipaddr.js's `unicast` range is refused: loopback, private, link-local, unique-local,
 * carrier-grade NAT, unspecified, multicast, reserved, and the IPv6 forms that carry an
 * IPv4 address (mapped, 6to4, NAT64, Teredo), so none of them is a way round the others.
 */
export function refusedAddress(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return "not an IP address";
  // process(): an IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4 address it is.
  const range = ipaddr.process(address).range();
  return range === "unicast" ? undefined : (RANGE_WORDS[range] ?? range);
}

const RANGE_WORDS: Record<string, string> = {
  linkLocal: "link-local", uniqueLocal: "unique-local", carrierGradeNat: "carrier-grade NAT", rfc6052: "NAT64", "6to4": "6to4", rfc6145: "IPv4-translated",
};

/** The error a refused address makes (its code lets the fetch tell it from other failures). */
export class RefusedAddressError extends Error {
  readonly code = "KEEN_WEB_REFUSED_ADDRESS";
  constructor(host: string, address: string, range: string) {
    // An IPv4-mapped IPv6 address is shown as the IPv4 address it is, too.
    const plain = ipaddr.isValid(address) ? ipaddr.process(address).toString() : address;
    const shown = plain === address ? address : `${address} (${plain})`;
    super(
      `${host === address ? `${shown} is a ${range} address` : `${host} resolves to ${shown}, ${range}`}: web_fetch does not reach loopback, private or link-local addresses ` +
        `unless the host is in web.allowedDomains of the user's Keen config`,
    );
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for the sockets of one fetch: resolves the name, refuses it when any of its
 * addresses is off limits, and hands the socket exactly the addresses it checked, so a
 * DNS answer that changes between the check and the connection (rebinding) cannot slip in.
 */
export function checkedLookup(resolve: typeof dnsLookup = dnsLookup) {
  return (hostname: string, options: { all?: boolean; family?: number | "IPv4" | "IPv6" }, callback: LookupCallback) => {
    resolve(hostname, { ...options, all: true }, (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      if (error) return callback(error, "");
      for (const { address } of addresses) {
        const range = refusedAddress(address);
        if (range) return callback(new RefusedAddressError(hostname, address, range) as NodeJS.ErrnoException, "");
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "");
      callback(null, first.address, first.family);
    });
  };
}
