import type { EventDraft } from "../../protocol/events.js";
import type { CurrentSession } from "./engine-session.js";
import type { EngineOptions, EngineSetup, ModelChoice } from "./engine-types.js";

/**
 * The engine's one cache of session setups (provider, tools, MCP servers):
 * one setup per (session, cwd, model), prepared once however many callers ask
 * at the same time (a front end preparing early, a subscriber wanting news, a
 * turn). A failed preparation is not kept: the next ask tries again (a config
 * fixed meanwhile counts). A setup replaced by another one is closed, so its
 * MCP servers end; `close` ends the last one. `apply` runs once per setup,
 * before any caller sees it (the engine's gate takes its mode and sandbox).
 */
export function createSetups(prepare: EngineOptions["prepare"], diagnose: (line: string) => void, apply: (setup: EngineSetup) => void) {
  let current: { key: string; value: Promise<EngineSetup> } | undefined;
  let latest: EngineSetup | undefined;

  const closeQuietly = (setup: EngineSetup | undefined) =>
    setup?.close?.().catch((error: unknown) => diagnose(`could not stop the session's helpers: ${error instanceof Error ? error.message : String(error)}`));

  return {
    /** The setup for the session as it is now (its model: chosen here, else stored). */
    for(session: CurrentSession): Promise<EngineSetup> {
      const key = keyOf(session);
      if (current?.key !== key) {
        const entry = {
          key,
          value: prepare({ id: session.id, cwd: session.cwd, model: session.model ?? session.meta?.model }).then((setup) => {
            if (latest !== setup) void closeQuietly(latest);
            latest = setup;
            apply(setup);
            return setup;
          }),
        };
        current = entry;
        entry.value.catch(() => {
          if (current === entry) current = undefined;
        });
      }
      return current.value;
    },
    /** The setup for the session only when it is already prepared or preparing (never starts one). */
    peek(session: CurrentSession): Promise<EngineSetup> | undefined {
      return current?.key === keyOf(session) ? current.value : undefined;
    },
    /** The setup prepared last (its redactor hides the secrets it knows of); undefined before the first one. */
    get latest(): EngineSetup | undefined {
      return latest;
    },
    /** Ends what the last setup started; never throws. */
    async close(): Promise<void> {
      await current?.value.then(() => {}, () => {});
      await closeQuietly(latest);
      await latest?.end?.().catch((error: unknown) => diagnose(`could not end the background jobs: ${error instanceof Error ? error.message : String(error)}`));
      latest = undefined;
      current = undefined;
    },
  };
}

function keyOf(session: CurrentSession): string {
  return `${session.id}\0${session.cwd}\0${session.model ?? session.meta?.model ?? ""}`;
}

/**
 * Setup news (MCP servers connecting or failing, config warnings) goes out
 * through the engine's own `emit`, so it is redacted, stamped and (during a
 * turn) stored like every other event. Attaching again only re-points where
 * later news goes.
 */
export function attachNews(setup: EngineSetup, emit: (draft: EventDraft) => Promise<void>): void {
  setup.attach?.(emit);
}

/**
 * `list-models`: the configured models, the session's current one marked and
 * its provider first. The current one is what the session's prepared setup
 * runs, else the chosen model as `checkModel` normalises it.
 */
export async function listSessionModels(
  options: Pick<EngineOptions, "checkModel" | "listModels">, chosen: string | undefined, setup: Promise<EngineSetup> | undefined,
): Promise<ModelChoice[]> {
  let current = (await setup?.catch(() => undefined))?.modelRef;
  if (!current && chosen) {
    // Normalised as set-model does ("claude-x" given on the command line is "anthropic/claude-x").
    try {
      current = options.checkModel(chosen);
    } catch {
      current = chosen;
    }
  }
  const provider = current?.includes("/") ? current.slice(0, current.indexOf("/")) : undefined;
  const rows = options.listModels().map((row) => ({ ...row, current: row.model === current }));
  // A model the configuration does not list (any name a provider takes) is still the session's: it is listed, marked.
  if (current && provider && !rows.some((row) => row.current)) {
    rows.push({ model: current, provider, available: rows.find((row) => row.provider === provider)?.available ?? true, current: true });
  }
  return rows.sort((a, b) => Number(b.provider === provider) - Number(a.provider === provider));
}
