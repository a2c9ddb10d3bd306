import type { AvailableCommand, StopReason } from "@agentclientprotocol/sdk";
import type { Request } from "../../protocol/client.js";
import type { ResponseTo } from "../../protocol/responses.js";

/*
 * Keen's slash commands in an editor. ACP sends a command as prompt text that
 * starts with `/name`; the agent lists what it offers in `available_commands_update`.
 * Offered are the TUI's commands an editor has no control of its own for:
 * `compact`, `undo` (only where the engine can undo: not when the editor owns
 * the files, nor for the CLI runner) and `mode` (for editors without a mode
 * picker), and `kill-job` (an editor shows a background job as a tool call, but has no way to end one). New session, model, theme, copy, help and exit are the editor's own. No `rewind`: ACP cannot take
 * messages out of the editor's thread, and where the editor owns the files it owns undo too.
 * A command's outcome, refusals included, is told as an agent message and the
 * prompt ends `end_turn`, as the TUI shows them as notices; only a cancel
 * changes that.
 */

/** What the session's engine can do, decided by its setup (see HostedSession.offers). */
export interface CommandOffers {
  compact: boolean;
  undo: boolean;
  /** The engine runs background jobs (its own tools: not the CLI runner). */
  jobs?: boolean;
}

/** What the commands need from their session. */
export interface CommandDeps {
  offers: CommandOffers;
  /** Sends an engine command and waits for its response. */
  call<C extends Request>(command: C): Promise<ResponseTo<C["kind"]>>;
  /** Tells the user something, as an agent message chunk. */
  say(text: string): Promise<void>;
  /** Changes the permission mode as session/set_mode does, and tells the client (current_mode_update); throws with a message. */
  setMode(mode: string): Promise<void>;
  modes: string[];
  currentMode(): string;
  /** True once the running command was cancelled (session/cancel). */
  cancelled(): boolean;
}

/** The slash commands of one session. */
export interface AcpCommands {
  /** For `available_commands_update`. */
  list(): AvailableCommand[];
  /** The command a prompt is, or undefined when it is a prompt for the model (unknown `/words` included). */
  match(text: string): { name: string; arg: string } | undefined;
  /** Runs one; resolves with the prompt's stop reason. Contract: never throws. */
  run(name: string, arg: string): Promise<StopReason>;
  /** Any other prompt: a pending `/undo` is no longer confirmed by the next `/undo`. */
  disarm(): void;
}

export function createAcpCommands(deps: CommandDeps): AcpCommands {
  const { offers } = deps;
  const all: AvailableCommand[] = [
    ...(offers.compact ? [{
      name: "compact", description: "Summarise the conversation so far to free context",
      input: { hint: "what the summary should keep (optional)" },
    }] : []),
    ...(offers.undo ? [{
      name: "undo", description: "Revert the latest turn's file writes and edits still in place, one turn further back each time (shows them first; /undo again does it)",
    }] : []),
    { name: "mode", description: "Show or set the permission mode", input: { hint: deps.modes.join(" | ") } },
    ...(offers.jobs ? [{
      name: "kill-job", description: "End a background job the model started (a dev server, a watch build)",
      input: { hint: "its id, as its tool call's title shows it (job-1)" },
    }] : []),
  ];
  // The first /undo showed what it would do; the next /undo, right after, does it.
  let undoArmed = false;

  async function undo(): Promise<void> {
    const confirm = undoArmed;
    undoArmed = false;
    const answer = await deps.call({ kind: "undo", ...(confirm ? { confirm: true } : {}) });
    if (!answer.ok) return deps.say(`Nothing was undone: ${answer.error}.`);
    const files = answer.data.files
      .map((f) => `${f.action === "remove" ? "remove" : "restore"} ${f.path}`).join(", ");
    if (confirm) return deps.say(`Undone: ${files}.`);
    undoArmed = true;
    return deps.say(`/undo will ${files}. Send /undo again to do it.`);
  }

  async function compact(instructions: string): Promise<void> {
    await deps.say("Compacting the conversation…\n");
    const answer = await deps.call({ kind: "compact", ...(instructions ? { instructions } : {}) });
    if (!answer.ok) return deps.say(`Not compacted: ${answer.error}.`);
    return deps.say(`Compacted: about ${answer.data.tokens_before} tokens of conversation are now ${answer.data.tokens_after}.`);
  }

  async function killJob(arg: string): Promise<void> {
    if (!arg) return deps.say("Which job? Send /kill-job with its id, as its tool call's title shows it (e.g. /kill-job job-1).");
    const id = /^\d+$/.test(arg) ? `job-${arg}` : arg;
    const answer = await deps.call({ kind: "kill-job", job_id: id });
    return deps.say(answer.ok ? `Killed ${id}.` : `Not killed: ${answer.error}.`);
  }

  async function mode(arg: string): Promise<void> {
    if (!arg) return deps.say(`The permission mode is ${deps.currentMode()} (modes: ${deps.modes.join(", ")}).`);
    try {
      await deps.setMode(arg);
      return deps.say(`Permission mode: ${arg}.`);
    } catch (error) {
      return deps.say(`The mode stays ${deps.currentMode()}: ${error instanceof Error ? error.message : String(error)}.`);
    }
  }

  return {
    list: () => all,
    match(text) {
      const m = /^\/([a-z-]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
      if (!m || !all.some((c) => c.name === m[1])) return undefined;
      return { name: m[1]!, arg: (m[2] ?? "").trim() };
    },
    async run(name, arg) {
      if (name !== "undo") undoArmed = false;
      try {
        if (name === "undo") await undo();
        else if (name === "compact") await compact(arg);
        else if (name === "kill-job") await killJob(arg);
        else await mode(arg);
      } catch {
        // A failed notification: the outcome could not be shown, the command still ran.
      }
      return deps.cancelled() ? "cancelled" : "end_turn";
    },
    disarm() {
      undoArmed = false;
    },
  };
}
