import { EventBus } from "../../protocol/bus.js";
import { request } from "../../protocol/client.js";
import { newSessionId } from "../../storage/ids.js";
import { openStore } from "../../storage/level-store.js";
import { UnknownSessionError, type SessionMeta } from "../../storage/store.js";
import { createSessionEngine } from "../agent/engine.js";
import { DEFAULT_RETRY } from "../agent/retry.js";
import { keenPaths } from "./config.js";
import { storedRunner } from "./cli-runner-setup.js";
import { checkModel, createPreparer, listModels } from "./engine-setup.js";
import { ExitError, UsageError } from "./errors.js";

/**
 * `keen sessions compact <id> [--instructions "…"]`: compacts a stored
 * session through the session engine's `compact` command, with the session's
 * own model. Exit 1 when the session is busy (another process runs a turn on
 * it) or the compaction failed; the session is then unchanged.
 */
export async function compactSession(idOrPrefix: string, flags: { instructions?: string }): Promise<number> {
  const paths = keenPaths();
  const store = openStore(paths.dataDir);
  let meta: SessionMeta;
  try {
    meta = await store.resolve(idOrPrefix);
  } catch (error) {
    if (error instanceof UnknownSessionError) throw new UsageError(error.message);
    throw error;
  }
  if ((await storedRunner(store, meta.id)) === "cli") {
    throw new UsageError(`session ${meta.id} runs through the CLI runner, whose CLI keeps (and compacts) its own context: nothing to compact in Keen`);
  }
  const prepare = createPreparer(paths, { headless: true, defaultMode: "read-only", mcp: false });
  const setup = await prepare({ id: meta.id, cwd: meta.cwd, model: meta.model });
  const bus = new EventBus((error) => process.stderr.write(`keen: an output failed: ${String(error)}\n`));
  const engine = createSessionEngine({
    store, bus, headless: true, cwd: meta.cwd, permissionMode: "read-only", interactive: false, redactor: setup.redactor,
    prepare, checkModel: (ref) => checkModel(paths, meta.cwd, ref), listModels: () => listModels(setup.config),
    retry: DEFAULT_RETRY, newId: newSessionId, initial: { id: meta.id, meta, cwd: meta.cwd },
  });
  const response = await request(engine, { kind: "compact", ...(flags.instructions ? { instructions: flags.instructions } : {}) });
  await engine.close();
  if (!response.ok) throw new ExitError(response.error, 1);
  const data = response.data;
  process.stderr.write(`keen: compacted session ${meta.id}: about ${data.tokens_before} → ${data.tokens_after} tokens\n`);
  return 0;
}
