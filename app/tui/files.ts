import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";

/*
 * Workspace paths for `@` completion. Gitignored files and files that look
 * secret are left out, so completing a path never puts a key file's name in
 * front of the model by accident. Kept in the TUI (no import of app/tools).
 */

const MAX_ENTRIES = 20_000;
const MAX_DEPTH = 16;
const ENV_TEMPLATES = new Set([".env.example", ".env.sample", ".env.template", ".env.dist"]);

/** Names the lister leaves out (the same families the file guard refuses). */
export function looksSecret(name: string): boolean {
  const n = name.toLowerCase();
  if (n === ".envrc" || n.endsWith(".env") || (n.startsWith(".env.") && !ENV_TEMPLATES.has(n))) return true;
  if (/^id_(rsa|dsa|ecdsa|ed25519)/.test(n) && !n.endsWith(".pub")) return true;
  if (/\.(pem|key|p12|pfx|jks|keystore|kdbx)$/.test(n)) return true;
  return ["credentials.json", ".netrc", ".git-credentials", ".pgpass", ".htpasswd", ".npmrc", ".pypirc"].includes(n);
}

interface Rules {
  base: string;
  ig: Ignore;
}

async function rulesIn(dir: string, base: string, extra = ""): Promise<Rules | undefined> {
  const text = await readFile(join(dir, ".gitignore"), "utf8").catch(() => "");
  if (!text && !extra) return undefined;
  return { base, ig: ignore().add(text).add(extra) };
}

/** Every non-ignored path under `cwd` (directories end in `/`), breadth first, bounded. */
export async function listWorkspace(cwd: string): Promise<string[]> {
  const exclude = await readFile(join(cwd, ".git", "info", "exclude"), "utf8").catch(() => "");
  const root = await rulesIn(cwd, "", exclude);
  const out: string[] = [];
  const queue: { rel: string; depth: number; rules: Rules[] }[] = [{ rel: "", depth: 0, rules: root ? [root] : [] }];
  while (queue.length && out.length < MAX_ENTRIES) {
    const { rel, depth, rules } = queue.shift()!;
    const dir = join(cwd, rel);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    const own = rel ? await rulesIn(dir, rel) : undefined;
    const active = own ? [...rules, own] : rules;
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (entry.name === ".git" || looksSecret(entry.name)) continue;
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      const isDir = entry.isDirectory();
      if (active.some((r) => r.ig.ignores((r.base ? path.slice(r.base.length + 1) : path) + (isDir ? "/" : "")))) continue;
      out.push(isDir ? `${path}/` : path);
      if (isDir && depth < MAX_DEPTH) queue.push({ rel: path, depth: depth + 1, rules: active });
    }
  }
  return out;
}

/** Paths matching a query: path prefix first, then file-name prefix, then substring; shorter first. */
export function matchPaths(paths: string[], query: string, limit = 50): string[] {
  const q = query.toLowerCase();
  const scored: [number, string][] = [];
  for (const p of paths) {
    const lower = p.toLowerCase();
    const name = lower.replace(/\/$/, "").split("/").pop()!;
    const score = lower.startsWith(q) ? 0 : name.startsWith(q) ? 1 : lower.includes(q) ? 2 : -1;
    if (score >= 0) scored.push([score, p]);
  }
  scored.sort((a, b) => a[0] - b[0] || a[1].length - b[1].length || a[1].localeCompare(b[1]));
  return scored.slice(0, limit).map(([, p]) => p);
}

/** A lister that indexes the workspace on first use; `onReady` fires when the index arrives. */
export function createFileLister(cwd: string, onReady: () => void): (query: string) => string[] {
  let paths: string[] | undefined;
  let started = false;
  return (query) => {
    if (!started) {
      started = true;
      listWorkspace(cwd).then((found) => {
        paths = found;
        onReady();
      }, () => {
        paths = [];
      });
    }
    return paths ? matchPaths(paths, query) : [];
  };
}
