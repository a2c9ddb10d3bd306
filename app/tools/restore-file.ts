import { closeSync, unlinkSync } from "node:fs";
import type { FileGuard } from "../permissions/guard.js";
import { openGuarded, readAll, readGuarded, replaceContent } from "../permissions/guarded-open.js";
import { decodeExact } from "./file-text.js";

/**
 * The file side of `undo`, behind the same guard and access-time checks as the
 * file tools. `checkFile`: the file's text is still what the turn left (an
 * error naming it otherwise). `restoreFile`: puts the earlier text back in the
 * file's own encoding, or removes a file the turn created.
 */
export function createFileRestorer(guard: FileGuard) {
  return {
    checkFile(path: string, expected: string): string | undefined {
      const read = readGuarded(guard, path);
      if (!read.ok) return read.kind === "missing" ? `${path} was removed since the turn` : read.reason;
      return decodeExact(read.data).text === expected ? undefined : `${path} changed since the turn`;
    },
    restoreFile(path: string, content: string | null): string | undefined {
      const file = openGuarded(guard, path, "write");
      if (!file.ok) return file.reason;
      try {
        if (content === null) {
          unlinkSync(file.path);
          return undefined;
        }
        const { encoding } = decodeExact(readAll(file.fd));
        replaceContent(file.fd, Buffer.from(content, encoding));
        return undefined;
      } catch (error) {
        return `${path}: ${error instanceof Error ? error.message : String(error)}`;
      } finally {
        closeSync(file.fd);
      }
    },
  };
}
