import { errorCodeOf } from "../../protocol/responses.js";
import { openStore } from "../../storage/level-store.js";
import { newSessionId } from "../../storage/ids.js";
import { forkSession } from "../agent/rewind.js";
import { keenPaths } from "./config.js";
import { UsageError } from "./errors.js";
import { positiveInt } from "./sessions.js";

/**
 * `keen sessions fork <id> [--at <prompt>]`: a new session holding the session's history before prompt `--at`
 * (default all of it); prints the new id on stdout (`keen --session <new id>` continues it). The original and the
 * workspace files are untouched. No model is asked: it works without a provider, for CLI-runner sessions too
 * (their next turn starts a new CLI session carrying the transcript).
 */
export async function forkStoredSession(idOrPrefix: string, flags: { at?: string }): Promise<number> {
  const at = flags.at === undefined ? undefined : positiveInt("--at", flags.at);
  try {
    const fork = await forkSession(openStore(keenPaths().dataDir), idOrPrefix, at, () => newSessionId());
    process.stdout.write(`${fork.meta.id}\n`);
    process.stderr.write(`keen: forked ${fork.meta.parent!.id} before prompt ${fork.at}${fork.text !== undefined ? ` (${JSON.stringify(fork.text.split("\n")[0])})` : " (all of it)"}\n`);
    return 0;
  } catch (error) {
    // No such session or prompt: the user's mistake (exit 2), one line.
    const code = errorCodeOf(error);
    if (code === "unknown_session" || code === "unknown_checkpoint") throw new UsageError((error as Error).message);
    throw error;
  }
}
