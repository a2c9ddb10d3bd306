import { existsSync, readFileSync } from "node:fs";
import type { PermissionMode } from "../../protocol/commands.js";
import { terminalText } from "../headless/terminal-text.js";
import type { Redactor } from "../permissions/redact.js";
import { CASSETTE_VERSION, CassetteError, parseCassette, type Cassette, type CassetteHeader } from "../providers/cassette-format.js";
import { requestKey } from "../providers/cassette-match.js";
import { createFetch, type SdkFetch } from "../providers/http.js";
import { createRecordingFetch, openCassetteWriter, type CassetteWriter } from "../providers/record-fetch.js";
import { createReplayPlayer } from "../providers/replay-fetch.js";
import { parseModelRef } from "../providers/registry.js";
import type { KeenPaths, ResolvedConfig } from "./config.js";
import { createDemoWorkspace, DEMO_NAME, DEMO_PROMPT, demoCassettePath } from "./demo.js";
import { UsageError } from "./errors.js";
import type { ModelChoice } from "./provider-setup.js";
import { version } from "./version.js";
import { sessionCassettePath, type CassetteSettings } from "./cassette-flags.js";

/** What a front end and createPreparer use of a process's cassette. */
export interface CassetteSetup {
  /** Set when replaying. */
  replay?: {
    /** The cassette as named in messages. */
    source: string;
    /** The last user message of the first recorded request: the prompt when a one-shot replay gets none. */
    prompt?: string;
    /** The demo only: creates its fresh temporary workspace, the cwd of new sessions unless `--cwd` says otherwise. */
    demoWorkspace?: () => string;
    /** The permission mode the replay runs in unless `--permission-mode` says otherwise; absent: the front end's (the demo: auto). */
    mode?: PermissionMode;
    /** The model to use — `ref`, else the cassette's; no key needed. */
    choose(ref: string | undefined, config: ResolvedConfig): ModelChoice;
  };
  /** The fetch for one session's provider: recording or replaying; undefined for neither. */
  fetchFor(sessionId: string, choice: ModelChoice, redactor: Redactor): SdkFetch | undefined;
}

/**
 * Opens the cassette of this process: reads the one to replay (creating the
 * demo workspace for `demo`), or prepares to record. A replay serves every
 * session of the process from one cassette, in order. A recording writes the
 * file given (truncated when the first request goes out) and appends the same
 * lines to each session's own copy in the data directory.
 */
export function openCassette(settings: CassetteSettings | undefined, paths: KeenPaths): CassetteSetup | undefined {
  if (!settings) return undefined;
  if (settings.replay) return openReplay(settings);
  const writers = new Map<string, CassetteWriter>();
  const writer = (path: string, header: CassetteHeader, mode: "fresh" | "append") => {
    let w = writers.get(path);
    if (!w) writers.set(path, (w = openCassetteWriter(path, header, mode)));
    return w;
  };
  const record = settings.record!;
  return {
    fetchFor(sessionId, choice, redactor) {
      const header = (): CassetteHeader => ({
        type: "cassette", version: CASSETTE_VERSION, keen: version, created: new Date().toISOString(),
        provider: choice.providerId, model: choice.model, kind: choice.preset.kind,
      });
      return createRecordingFetch(createFetch(process.env, { web: true }), {
        kind: choice.preset.kind,
        redactor,
        // Opened at the first request, so a run that fails before one leaves no file behind.
        writers: () => [writer(record, header(), "fresh"), writer(sessionCassettePath(paths, sessionId), header(), "append")],
      });
    },
  };
}

function openReplay(settings: CassetteSettings): CassetteSetup {
  const demo = settings.replay === DEMO_NAME;
  const file = demo ? demoCassettePath() : settings.replay!;
  const source = demo ? DEMO_NAME : settings.replay!;
  let cassette: Cassette;
  try {
    if (!existsSync(file)) throw new CassetteError(demo ? `the demo cassette is missing (${file}): run npm run build` : `no cassette at ${file}`);
    cassette = parseCassette(readFileSync(file, "utf8"), source);
  } catch (error) {
    if (error instanceof CassetteError) throw new UsageError(error.message);
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const player = createReplayPlayer({
    cassette, source, loose: settings.loose, speed: settings.speed,
    onLoose: (message) => process.stderr.write(`keen: ${terminalText(message)}\n`),
  });
  const first = cassette.interactions[0];
  const prompts = first ? requestKey(first.request.kind, first.request.body).prompts : [];
  const header = cassette.header;
  return {
    replay: {
      source,
      prompt: demo ? DEMO_PROMPT : prompts.at(-1),
      ...(demo ? { demoWorkspace: createDemoWorkspace, mode: "auto" as const } : {}),
      choose,
    },
    fetchFor: (_sessionId, choice) => player.fetchFor(choice.preset.kind),
  };

  function choose(ref: string | undefined, config: ResolvedConfig): ModelChoice {
    const { provider, model } = parseModelRef(ref ?? `${header.provider}/${header.model}`);
    // A provider the recording machine had in its config need not exist here: the cassette says its wire format.
    const preset = config.providers[provider]
      ?? (provider === header.provider ? { kind: header.kind, defaultModel: header.model, models: {} } : undefined);
    if (!preset) throw new UsageError(`unknown provider "${provider}"; known: ${Object.keys(config.providers).join(", ")}`, "unknown_model");
    return { providerId: provider, model: model ?? preset.defaultModel, preset, apiKey: "replay", baseURLSource: `the cassette ${source}` };
  }
}
