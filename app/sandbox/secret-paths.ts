import { lstatSync, readdirSync, realpathSync, statfsSync, statSync, type BigIntStats, type Dirent } from "node:fs";
import { join, sep } from "node:path";
import { secretNameGlobs } from "../permissions/secret-names.js";

/**
 * The secret-named entries below a directory, at any depth, for the sandbox's read denies on
 * Linux, found once and then kept up to date, instead of the library expanding 26 `**` globs by
 * listing the whole tree (node_modules included) before every command: 0.8–1.1 s of CPU per
 * command in a 30,000-entry checkout.
 *
 * Why it finds everything the library's walk found (read-deny-glob.ts, walkGlobPatternSteps):
 * - Every directory is visited on every scan, and stat'ed; it is listed again unless it is the same
 *   directory (device, inode) with the same mtime and ctime as when it was listed. A directory's
 *   mtime and ctime change whenever an entry is created, removed or renamed in it, and its ctime
 *   on chmod too; a ctime cannot be set by a process (touch sets mtime, and ctime to now).
 * - Timestamps have a granularity (a kernel tick, 1–2 s on some file systems): an entry added in
 *   the same tick as the listing leaves both unchanged. So a listing counts only if the directory's
 *   ctime was over 2 s older than the listing ("settled", as git's racy-clean rule); a directory
 *   changed more recently is listed again on every scan until it settles.
 * - Only on local file systems whose timestamps the kernel keeps (ext2/3/4, xfs, btrfs, tmpfs,
 *   overlayfs, zfs, f2fs, bcachefs), by each directory's own device. Elsewhere (NFS, FUSE, 9p, …)
 *   every directory is listed on every scan, like the library did.
 * - Symbolic links are stat'ed on every scan, and one that leads to a directory is walked where it
 *   leads, unless that is at or above the directory holding it or the root (as the library does);
 *   a link's target can change without any directory here changing.
 * - A directory that cannot be listed (or stat'ed) is denied whole, and tried again next scan.
 * - Names: the globs of secretNameGlobs, matched case-insensitively (the library matched case);
 *   any kind of entry. A matching directory is denied whole and not walked (its tmpfs hides all).
 * - Paths are given as found (real directories, a matching link by its own name): the library
 *   mounts over where each really is, and skips one that is not there, as for its glob matches.
 * What a command creates while it runs is not hidden from that command, as before: mounts are
 * made when it starts. The next command's scan finds it.
 */
export interface SecretScanner {
  /** Absolute paths of the secret-named entries (and unlistable directories) below the root now. */
  scan(): string[];
  /** How many directories the last scan listed (the others' listings were still good). */
  readonly listed: number;
}

const SECRET = new RegExp(
  `^(?:${secretNameGlobs().map((glob) => glob.replace(/^\*\*\//, "").replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")).join("|")})$`,
  "is",
);

/** Whether a file name is one the sandbox hides (the secret-name globs, any case). */
export function isSecretName(name: string): boolean {
  return SECRET.test(name);
}

/** A directory's entries that matter, as listed when its stat was `stat`. */
interface Listing {
  stat: BigIntStats;
  settled: boolean;
  matches: string[];
  dirs: string[];
  links: string[];
}

// statfs f_type of file systems whose directory mtime/ctime the local kernel maintains.
const LOCAL_FS = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1, 0xf2f52010, 0xca451a4e]);
const SETTLE_NS = 2_000_000_000n;

/** `now`: the wall clock in ns (a test seam: a clock ahead takes every listing as settled). */
const wallClockNs = () => BigInt(Date.now()) * 1_000_000n;
const localDev = new Map<bigint, boolean>();

function isLocal(dir: string, dev: bigint): boolean {
  let local = localDev.get(dev);
  if (local === undefined) {
    try {
      local = LOCAL_FS.has(Number(statfsSync(dir).type));
    } catch {
      local = false;
    }
    localDev.set(dev, local);
  }
  return local;
}

/** Whether a listing of `dir` taken when its stat was `listing.stat` still holds now that it is `stat` (see above). */
function unchanged(listing: { stat: BigIntStats; settled: boolean } | undefined, stat: BigIntStats, dir: string): boolean {
  return listing !== undefined && listing.settled && listing.stat.dev === stat.dev && listing.stat.ino === stat.ino
    && listing.stat.mtimeNs === stat.mtimeNs && listing.stat.ctimeNs === stat.ctimeNs && isLocal(dir, stat.dev);
}

/**
 * `readdirSync(dir, { withFileTypes: true })`, kept between calls by the same rules as the
 * scanner's listings, for protected-paths.ts's walk. Throws as readdirSync does.
 */
export function createDirectoryListings(now = wallClockNs): (dir: string) => Dirent[] {
  const cache = new Map<string, { stat: BigIntStats; settled: boolean; entries: Dirent[] }>();
  return (dir) => {
    // Followed: the workspace itself may be reached through a link (below it, the walk lists real directories only).
    const stat = statSync(dir, { bigint: true });
    if (!stat.isDirectory()) throw Object.assign(new Error(`ENOTDIR: not a directory, scandir '${dir}'`), { code: "ENOTDIR" });
    const known = cache.get(dir);
    if (unchanged(known, stat, dir)) return known!.entries;
    const listedAt = now();
    cache.delete(dir);
    const entries = readdirSync(dir, { withFileTypes: true });
    cache.set(dir, { stat, settled: stat.ctimeNs < listedAt - SETTLE_NS, entries });
    return entries;
  };
}

export function createSecretScanner(root: string, now = wallClockNs): SecretScanner {
  let listed = 0;
  const cache = new Map<string, Listing>();

  return {
    get listed() {
      return listed;
    },
    scan() {
      listed = 0;
      let base: string;
      try {
        base = realpathSync(root);
      } catch {
        return [];
      }
      const found: string[] = [];
      const visited = new Set<string>();
      const pending = [base];
      for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
        if (visited.has(dir)) continue;
        visited.add(dir);
        let stat: BigIntStats;
        try {
          stat = lstatSync(dir, { bigint: true });
        } catch (error) {
          if (!absent(error)) found.push(dir);
          continue;
        }
        // Replaced since its parent was listed (by a file or a link): the parent's changed times list it again next scan.
        if (!stat.isDirectory()) continue;
        let listing = cache.get(dir);
        if (!unchanged(listing, stat, dir)) {
          try {
            listing = list(dir, stat, now());
            listed++;
          } catch (error) {
            cache.delete(dir);
            if (!absent(error)) found.push(dir);
            continue;
          }
          cache.set(dir, listing);
        }
        for (const name of listing!.matches) found.push(join(dir, name));
        for (const name of listing!.dirs) pending.push(join(dir, name));
        for (const name of listing!.links) {
          const target = linkedDirectory(join(dir, name));
          if (target && !atOrUnder(dir, target) && !atOrUnder(base, target)) pending.push(target);
        }
      }
      for (const dir of cache.keys()) if (!visited.has(dir)) cache.delete(dir);
      return found;
    },
  };
}

/** Lists `dir`, whose stat (taken before the listing) is `stat`. Throws when it cannot be listed. */
function list(dir: string, stat: BigIntStats, now: bigint): Listing {
  const listing: Listing = { stat, settled: stat.ctimeNs < now - SETTLE_NS, matches: [], dirs: [], links: [] };
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (isSecretName(entry.name)) {
      listing.matches.push(entry.name);
      continue;
    }
    const kind = kindOf(entry, dir);
    if (kind === "dir") listing.dirs.push(entry.name);
    else if (kind === "link") listing.links.push(entry.name);
  }
  return listing;
}

/** An entry's kind; a file system that lists names without one (some NFS, FUSE, XFS ftype=0) is asked. */
function kindOf(entry: Dirent, dir: string): "dir" | "link" | "other" {
  if (entry.isDirectory()) return "dir";
  if (entry.isSymbolicLink()) return "link";
  if (entry.isFile() || entry.isFIFO() || entry.isSocket() || entry.isCharacterDevice() || entry.isBlockDevice()) return "other";
  try {
    const stat = lstatSync(join(dir, entry.name));
    return stat.isDirectory() ? "dir" : stat.isSymbolicLink() ? "link" : "other";
  } catch (error) {
    // Gone since it was listed, or not to be looked at: taken for a directory, whose listing then fails and denies it whole.
    return absent(error) ? "other" : "dir";
  }
}

/** Where a link leads when that is a directory that can be looked at, else undefined. */
function linkedDirectory(link: string): string | undefined {
  try {
    return statSync(link).isDirectory() ? realpathSync(link) : undefined;
  } catch {
    return undefined;
  }
}

function atOrUnder(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir === sep ? dir : dir + sep);
}

function absent(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}
