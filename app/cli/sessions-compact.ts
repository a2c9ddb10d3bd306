import { request } from "../../protocol/client.js";
import { storedRunner } from "./cli-runner-setup.js";
import { ExitError, UsageError } from "./errors.js";
import { openHost } from "./host.js";

/**
 * `keen sessions compact <id> [--instructions "…"]`: compacts a stored
 * session through the session engine's `compact` command, with the session's
 * own model. Exit 1 when the session is busy (another process runs a turn on
 * it) or the compaction failed; the session is then unchanged.
 */
export async function compactSession(idOrPrefix: string, flags: { instructions?: string }): Promise<number> {
  // Compaction runs no tools: read-only, and no MCP server starts (the host's table).
  const host = await openHost("compact", { permissionMode: "read-only" });
  const start = await host.start({ session: idOrPrefix });
  const meta = start.meta;
  if (!meta) throw new UsageError("keen sessions compact needs a session id");
  if ((await storedRunner(host.store, meta.id)) === "cli") {
    throw new UsageError(`session ${meta.id} runs through the CLI runner, whose CLI keeps (and compacts) its own context: nothing to compact in Keen`);
  }
  const { engine, close } = await host.open(start);
  const response = await request(engine, { kind: "compact", ...(flags.instructions ? { instructions: flags.instructions } : {}) });
  await close();
  if (!response.ok) throw new ExitError(response.error, 1);
  const data = response.data;
  process.stderr.write(`keen: compacted session ${meta.id}: about ${data.tokens_before} → ${data.tokens_after} tokens\n`);
  return 0;
}
