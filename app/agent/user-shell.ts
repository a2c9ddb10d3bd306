import type { EventDraft, EventOf, KeenEvent } from "../../protocol/events.js";
import type { ContentBlock, Message } from "../../protocol/messages.js";
import type { Tool } from "../tools/tool.js";
import { createOutputThrottle } from "./tool-runner.js";

/*
 * The user's own shell command (the TUI's `!command`, the `shell` command):
 * run by the session's bash tool — the same sandbox, timeout, output cap and
 * secret redaction as the model's bash — but without the permission gate: the
 * user typed it. A sandboxed command's connection to a host outside the
 * allowlist is refused, not asked about (nobody else is there to ask).
 */

/** What the engine hands over: the session's tools, where the events go, and the abort. */
export interface UserShellOptions {
  tools: Tool[];
  command: string;
  shellId: string;
  emit: (event: EventDraft) => Promise<void>;
  signal: AbortSignal;
}

/** How the command ended, for the `shell` response. */
export interface UserShellOutcome {
  exit_code: number | null;
  is_error: boolean;
}

/**
 * Runs the command and emits `shell-start`, throttled `shell-update`s and the
 * stored `shell` event. Contract: never throws for the command's own failure
 * (that is its `shell` event's `is_error`); throws only when the session has no
 * bash tool.
 */
export async function runUserShell(options: UserShellOptions): Promise<UserShellOutcome> {
  const bash = options.tools.find((t) => t.shell === true);
  if (!bash) throw new Error("this session has no bash tool to run the command with");
  const { command, shellId: shell_id, emit } = options;
  await emit({ kind: "shell-start", role: "user", shell_id, command });
  const started = Date.now();
  const updates = createOutputThrottle((tail, total) => ({ kind: "shell-update", role: "user", shell_id, tail, total_bytes: total }), emit);
  let output: string;
  let exitCode: number | null = null;
  let isError: boolean;
  try {
    const result = await bash.run({ command }, { signal: options.signal, onOutput: updates.push });
    output = result.content;
    isError = result.is_error;
    const code = result.details?.exit_code;
    exitCode = typeof code === "number" ? code : null;
  } catch (error) {
    output = `The command could not run: ${error instanceof Error ? error.message : String(error)}`;
    isError = true;
  } finally {
    await updates.close();
  }
  await emit({ kind: "shell", role: "user", shell_id, command, output, exit_code: exitCode, is_error: isError, duration_ms: Date.now() - started });
  return { exit_code: exitCode, is_error: isError };
}

/**
 * The user's commands since the session's last prompt, as text blocks to put
 * before the next prompt: the model sees what the user ran and saw. Stored with
 * that prompt's user message, so a resumed session keeps them in its history.
 */
export function shellContext(events: KeenEvent[]): ContentBlock[] {
  let from = events.length;
  while (from > 0 && events[from - 1]!.kind !== "user-message" && events[from - 1]!.kind !== "context-replacement") from--;
  return events.slice(from)
    .filter((e): e is EventOf<"shell"> => e.kind === "shell")
    .map((e) => ({ type: "text" as const, text: shellText(e), context: true as const }));
}

/** What the user typed: a user message's text without the context Keen put before it (the `text` event shows this). */
export function typedText(message: Message): string {
  return message.content.flatMap((b) => (b.type === "text" && !b.context ? [b.text] : [])).join("\n");
}

function shellText(e: EventOf<"shell">): string {
  const ended = e.exit_code === null ? "it did not finish" : `exit code ${e.exit_code}`;
  return `<user_shell_command>\nThe user ran this command in the workspace themselves (${ended}):\n$ ${e.command}\n${e.output}\n</user_shell_command>`;
}
