/**
 * A local npm registry for the package test, built from package-lock.json and npm's cache. Why: the test
 * installs the packed tarball the way a user does, and npm resolves every dependency through the
 * registry's package documents. `npm ci` and `npm install` put the tarballs in npm's cache but not those
 * documents, so on a fresh machine an offline install fails with ENOTCACHED and an online one would reach
 * the network. This server answers each document with the versions the lockfile pins (so npm resolves what
 * the repository was tested with) and each tarball from the cache's content store by its integrity; a
 * package the cache lacks is a 404 naming it, never a trip to the network.
 */
import { createReadStream, existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

/** Lockfile v3 entry fields that belong in a version's manifest, as npm publishes them. */
const MANIFEST_FIELDS = ["dependencies", "optionalDependencies", "peerDependencies", "peerDependenciesMeta", "bin", "engines", "os", "cpu", "license", "hasInstallScript", "deprecated"];

interface LockEntry { version?: string; resolved?: string; integrity?: string; link?: boolean; name?: string; [field: string]: unknown }

export interface NpmRegistry {
  url: string;
  /** Tarballs and documents asked for that the registry could not answer. */
  misses: string[];
  close(): Promise<void>;
}

export async function startNpmRegistry(lockfile: string, cacheDir: string): Promise<NpmRegistry> {
  const lock = JSON.parse(readFileSync(lockfile, "utf8")) as { packages: Record<string, LockEntry> };
  const documents = new Map<string, Map<string, LockEntry>>();
  const tarballs = new Map<string, string>();
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path || entry.link || !entry.version || !entry.integrity) continue;
    const name = entry.name ?? path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
    if (!documents.has(name)) documents.set(name, new Map());
    documents.get(name)!.set(entry.version, entry);
  }
  const misses: string[] = [];
  let url = "";
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname.slice(1));
    const tarball = tarballs.get(path);
    if (tarball) {
      const file = contentPath(cacheDir, tarball);
      if (existsSync(file)) return void createReadStream(file).pipe(res.writeHead(200, { "content-type": "application/octet-stream" }));
    } else {
      const versions = documents.get(path);
      if (versions) return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(document(path, versions)));
    }
    misses.push(path);
    res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: `${path}: not in package-lock.json or npm's cache` }));
  });

  function document(name: string, versions: Map<string, LockEntry>) {
    const manifests: Record<string, unknown> = {};
    for (const [version, entry] of versions) {
      const file = `-/${name}-${version}.tgz`;
      tarballs.set(file, entry.integrity!);
      const manifest: Record<string, unknown> = { name, version, dist: { tarball: `${url}/${file}`, integrity: entry.integrity } };
      for (const field of MANIFEST_FIELDS) if (entry[field] !== undefined) manifest[field] = entry[field];
      manifests[version] = manifest;
    }
    const latest = [...versions.keys()].sort(compareVersions).at(-1)!;
    return { name, "dist-tags": { latest }, versions: manifests };
  }

  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    misses,
    close: () => new Promise<void>((done) => { server.closeAllConnections(); server.close(() => done()); }),
  };
}

/** Where cacache keeps content with this integrity (its documented layout: algorithm, then the hex digest split 2/2/rest). */
function contentPath(cacheDir: string, integrity: string): string {
  const [algorithm, digest] = integrity.split(" ")[0]!.split(/-(.*)/s) as [string, string];
  const hex = Buffer.from(digest, "base64").toString("hex");
  return join(cacheDir, "_cacache", "content-v2", algorithm, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}

function compareVersions(a: string, b: string): number {
  const parts = (v: string) => v.split(/[.+-]/).slice(0, 3).map(Number);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}
