import { lstatSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { secretDirKind, secretFileKind } from "./secret-names.js";

/** Where protected files are found: every file under `path`, or (`secretsOnly`) only files with secret names. */
export interface InodeSource {
  path: string;
  secretsOnly?: boolean;
}

/** A file id from a `{ bigint: true }` stat: numbers lose precision on 64-bit inode filesystems. */
export interface FileId {
  dev: bigint;
  ino: bigint;
}

/** What a lookup found: the protected file with that id, or a device whose scan was cut short. */
export type InodeMatch = { path: string } | { unsure: string } | undefined;

/** Options for createInodeIndex; the defaults suit a guard. */
export interface InodeIndexOptions {
  /** Entries visited per source before the scan gives up and the source's device counts as unsure. */
  maxEntries?: number;
  /** How long a scan is reused: protected files appear rarely, multi-link reads come in bursts. */
  ttlMs?: number;
  /** The clock the ttl is measured on (tests step it). */
  now?: () => number;
}

// Package managers and git keep their own hard links here; neither holds the user's secrets.
const SKIP_IN_SECRET_SCAN = new Set(["node_modules", ".git"]);

/**
 * The device and inode of every protected file Keen can find, so that a hard link to one
 * is recognised under any name. Built by a bounded walk the first time a file with more
 * than one link is met, and rebuilt after `ttlMs`. Symlinks below a source are not followed.
 */
export function createInodeIndex(sources: () => InodeSource[], opts: InodeIndexOptions = {}) {
  const maxEntries = opts.maxEntries ?? 20_000;
  const ttlMs = opts.ttlMs ?? 5_000;
  const now = opts.now ?? Date.now;
  let built: { at: number; ids: Map<string, string>; unsure: Map<bigint, string> } | undefined;

  function build() {
    const ids = new Map<string, string>();
    const unsure = new Map<bigint, string>();
    for (const source of sources()) {
      const top = statSync(source.path, { bigint: true, throwIfNoEntry: false });
      if (!top) continue;
      let budget = maxEntries;
      const add = (path: string, st: { dev: bigint; ino: bigint }) => ids.set(`${st.dev}:${st.ino}`, path);
      const walk = (dir: string, all: boolean): boolean => {
        let entries;
        try {
          entries = readdirSync(dir, { withFileTypes: true });
        } catch {
          return true; // unreadable: Keen cannot read what is below either
        }
        for (const entry of entries) {
          if (--budget < 0) return false;
          const path = join(dir, entry.name);
          if (entry.isDirectory()) {
            if (!all && SKIP_IN_SECRET_SCAN.has(entry.name)) continue;
            if (!walk(path, all || secretDirKind(entry.name) !== undefined)) return false;
          } else if (entry.isFile() && (all || secretFileKind(entry.name))) {
            const st = lstatSync(path, { bigint: true, throwIfNoEntry: false });
            if (st) add(path, st);
          }
        }
        return true;
      };
      const all = !source.secretsOnly;
      if (top.isFile()) {
        if (all) add(source.path, top);
      } else if (top.isDirectory() && !walk(source.path, all)) {
        unsure.set(top.dev, source.path);
      }
    }
    return { at: now(), ids, unsure };
  }

  return {
    /** The protected file that `id` is, if any. */
    lookup(id: FileId): InodeMatch {
      if (!built || now() - built.at >= ttlMs) built = build();
      const path = built.ids.get(`${id.dev}:${id.ino}`);
      if (path) return { path };
      const cut = built.unsure.get(id.dev);
      return cut ? { unsure: cut } : undefined;
    },
  };
}
