import { test } from "node:test";
import assert from "node:assert/strict";
import type { LookupAddress } from "node:dns";
import { checkedLookup, hostKey, listStanding, matchesPattern, refusedAddress } from "../../../app/tools/web/hosts.js";
import { followsRedirect, urlRefusal } from "../../../app/tools/web/fetch-page.js";

test("loopback, private, link-local, unique-local and the IPv6 forms that carry an IPv4 address are refused; public ones are not", () => {
  const refused = [
    "127.0.0.1", "127.8.9.10", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "255.255.255.255", "224.0.0.1",
    "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1",
    "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::1",
  ];
  for (const address of refused) assert.ok(refusedAddress(address), `${address} is refused`);
  for (const address of ["93.184.215.14", "1.1.1.1", "2606:4700::1111", "::ffff:1.1.1.1"]) assert.equal(refusedAddress(address), undefined, address);
  assert.match(refusedAddress("::ffff:127.0.0.1")!, /loopback/);
});

test("patterns: exact names, *.subdomains (not the name itself), ports, IPv6 with or without brackets, one spelling of an address", () => {
  const u = (s: string) => new URL(s);
  assert.ok(matchesPattern("example.com", u("https://example.com/x")));
  assert.ok(matchesPattern("Example.COM", u("https://example.com./x")));
  assert.ok(!matchesPattern("example.com", u("https://docs.example.com/")));
  assert.ok(matchesPattern("*.example.com", u("https://docs.example.com/")));
  assert.ok(!matchesPattern("*.example.com", u("https://example.com/")));
  assert.ok(!matchesPattern("*.example.com", u("https://evilexample.com/")));
  assert.ok(matchesPattern("127.0.0.1:8080", u("http://127.0.0.1:8080/")));
  assert.ok(!matchesPattern("127.0.0.1:8080", u("http://127.0.0.1:8081/")));
  assert.ok(matchesPattern("example.com:443", u("https://example.com/")), "the scheme's default port counts");
  assert.ok(matchesPattern("::1", u("http://[::1]:3000/")));
  assert.ok(matchesPattern("[::1]:3000", u("http://[::1]:3000/")));
  assert.ok(!matchesPattern("[::1]:3000", u("http://[::1]:3001/")));
  assert.ok(matchesPattern("::ffff:7f00:1", u("http://[::ffff:127.0.0.1]/")));
  assert.equal(hostKey(u("http://[::1]:3000/")), "[::1]:3000");
  assert.equal(hostKey(u("https://Docs.Example.com/a")), "docs.example.com");
});

test("lists: denied wins over allowed; a bare * allows but does not open private addresses", () => {
  const url = new URL("http://127.0.0.1:9000/");
  assert.deepEqual(listStanding({ allowed: ["127.0.0.1"], denied: [] }, url), { denied: false, allowed: true, explicit: true });
  assert.deepEqual(listStanding({ allowed: ["127.0.0.1"], denied: ["127.0.0.1:9000"] }, url), { denied: true, allowed: false, explicit: false });
  assert.deepEqual(listStanding({ allowed: ["*"], denied: [] }, url), { denied: false, allowed: true, explicit: false });
  assert.match(urlRefusal(url, { allowed: ["*"], denied: [] })!, /127\.0\.0\.1 is a loopback address/);
  assert.equal(urlRefusal(url, { allowed: ["127.0.0.1"], denied: [] }), undefined);
  assert.match(urlRefusal(url, { allowed: ["127.0.0.1"], denied: ["127.0.0.1"] })!, /web\.deniedDomains/);
  assert.match(urlRefusal(new URL("http://[::ffff:192.168.0.1]/"), { allowed: [], denied: [] })!, /private/);
  assert.match(urlRefusal(new URL("file:///etc/passwd"), { allowed: ["*"], denied: [] })!, /http and https URLs only/);
  assert.match(urlRefusal(new URL("https://user:pw@example.com/"), { allowed: [], denied: [] })!, /credentials/);
});

test("redirects: followed within the host (any path, http to https), to another host only when the lists allow it", () => {
  const lists = { allowed: ["cdn.example.net"], denied: [] };
  const from = new URL("http://example.com/a");
  assert.ok(followsRedirect(from, new URL("https://example.com/b"), lists));
  assert.ok(!followsRedirect(from, new URL("https://www.example.com/b"), lists));
  assert.ok(!followsRedirect(from, new URL("http://127.0.0.1/"), lists));
  assert.ok(followsRedirect(from, new URL("https://cdn.example.net/x"), lists));
});

type Resolver = Parameters<typeof checkedLookup>[0];
const answering = (addresses: LookupAddress[]): Resolver =>
  ((_host: string, _options: unknown, callback: (e: null, a: LookupAddress[]) => void) => callback(null, addresses)) as unknown as Resolver;
const lookupOnce = (resolver: Resolver, all: boolean) =>
  new Promise<{ error: Error | null; address: unknown; family?: number }>((resolve) =>
    checkedLookup(resolver)("rebind.example", { all }, (error, address, family) => resolve({ error, address, family })));

test("the connection's lookup refuses a name when any address it resolves to is off limits, and hands on exactly what it checked", async () => {
  const mixed = await lookupOnce(answering([{ address: "93.184.215.14", family: 4 }, { address: "127.0.0.1", family: 4 }]), true);
  assert.match(String(mixed.error?.message), /rebind\.example resolves to 127\.0\.0\.1, loopback/);
  const mapped = await lookupOnce(answering([{ address: "::ffff:10.1.2.3", family: 6 }]), false);
  assert.match(String(mapped.error?.message), /private/);
  const good = [{ address: "93.184.215.14", family: 4 }, { address: "2606:2800::1", family: 6 }];
  assert.deepEqual(await lookupOnce(answering(good), true), { error: null, address: good, family: undefined });
  assert.deepEqual(await lookupOnce(answering(good), false), { error: null, address: "93.184.215.14", family: 4 });
});
