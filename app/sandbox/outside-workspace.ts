import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { sandboxTempRoot } from "./temp-root.js";

let redirects = 0;
let home: string | undefined;

/**
 * Runs one wrap with the process in an empty directory the sandbox cannot write. The
 * library write-protects the dotfiles and git hooks of its process's working directory,
 * and for one that does not exist it binds a placeholder there, which bubblewrap makes on
 * the host: twelve empty files in the user's repository, for as long as the command runs
 * (for good after a kill -9). Keen protects the workspace itself (protectedPaths). The
 * directory is kept while any wrap is in flight: the library starts a wrap over when the
 * working directory changes under it. Keen resolves its paths against the workspace, never
 * process.cwd(), once started.
 */
export async function outsideWorkspace<T>(wrap: () => Promise<T>): Promise<T> {
  if (redirects++ === 0) {
    const empty = join(sandboxTempRoot(), "cwd");
    mkdirSync(empty, { recursive: true });
    try {
      home = process.cwd();
    } catch {
      home = undefined;
    }
    process.chdir(empty);
  }
  try {
    return await wrap();
  } finally {
    if (--redirects === 0 && home) {
      try {
        process.chdir(home);
      } catch {
        // The directory Keen started in is gone: staying in the empty one harms nothing.
      }
    }
  }
}
