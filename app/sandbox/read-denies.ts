import { statSync } from "node:fs";

/**
 * The read denies worth handing the sandbox library for one command on Linux: every entry
 * except the plain paths that are not there. For such a path the library mounts nothing (its
 * readDenyTargetOf answers "not there" for ENOENT), but only after resolving it several times
 * per wrap, each a thrown ENOENT: ~10 ms of CPU per command for the ~50 credential and other
 * agents' paths of a usual home that do not exist. Checked again before every command, so one
 * that appears later is denied from the next command on, as it was by the library itself.
 * Kept: a path that is there, one that cannot be looked at (EACCES, ENOTDIR: the library decides,
 * and it hides more rather than less), and an entry with pattern characters (the library reads
 * it as a glob). A default write path of the library under an absent entry is absent too, and
 * the library binds no write path that is not there, so dropping the entry widens no write.
 */
export function presentReadDenies(entries: string[]): string[] {
  return entries.filter((entry) => {
    if (/[*?[\]{}]/.test(entry)) return true;
    // Not statSync's throwIfNoEntry: Node 24 answers undefined for ENOTDIR as well, and Node 20 throws.
    try {
      statSync(entry);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code !== "ENOENT";
    }
  });
}
